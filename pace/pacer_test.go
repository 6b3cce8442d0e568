package pace

import (
	"errors"
	"math"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/internal/testbed"
)

// run drives p from a fake clock for frames frames with batches of max and
// returns the fake time of every grant and its size.
func run(t *testing.T, p *Pacer, f *fakeClock, frames int64, max int) (at []int64, n []int) {
	t.Helper()
	var stop atomic.Bool
	var sent int64
	for sent < frames {
		g := p.Grant(max, &stop)
		if g < 1 || g > max {
			t.Fatalf("Grant(%d) = %d", max, g)
		}
		at = append(at, f.now)
		n = append(n, g)
		sent += int64(g)
	}
	return at, n
}

func TestLongRunAverageExact(t *testing.T) {
	for _, mode := range []WaitMode{Spin, Hybrid, Sleep} {
		for _, fps := range []float64{1e6 / 3, 1000, 15, 7.3e6} {
			// spinning advances fake time by one step per clock read: keep
			// the number of reads per frame interval modest
			step := max(7, int64(1e9/fps/100))
			f := &fakeClock{now: 1e12, step: step, oversleep: 3000}
			p := New(Config{FPS: fps, Wait: mode, Clock: newFakeClock(f)})
			start := f.now + f.step
			frames := int64(50_000)
			if fps < 1e4 {
				frames = 3_000
			}
			at, n := run(t, p, f, frames, 64)
			// Every frame goes at or after its due time minus the burst it
			// belongs to, and the schedule advanced by exactly frames
			// intervals.
			period := 1e9 / fps
			var k int64
			for i := range at {
				due := float64(start) + float64(k-int64(p.Burst()-1))*period
				if float64(at[i]) < due-1 {
					t.Fatalf("%v %v fps: grant %d of frame %d at %d, due %.1f: early", mode, fps, i, k, at[i], due)
				}
				k += int64(n[i])
			}
			want := float64(start) + float64(k)*period
			got := float64(p.next) + float64(p.nextFrac)/(1<<64)
			if math.Abs(got-want) > 1e-6*period+1 {
				t.Errorf("%v %v fps: after %d frames next = %.3f, want %.3f", mode, fps, k, got, want)
			}
			// at any grant, the frames granted before it are the frames due
			// by then, give or take one burst
			last := at[len(at)-1]
			before := k - int64(n[len(n)-1])
			due := int64(float64(last-start)/period) + 1
			if d := before - due; d > int64(p.Burst()) || d < -int64(p.Burst()) {
				t.Errorf("%v %v fps: %d frames granted before %d ns, %d due (burst %d)", mode, fps, before, last-start, due, p.Burst())
			}
			if s := p.Stats(); s.Frames != k || s.Forgiven != 0 {
				t.Errorf("%v %v fps: stats %+v", mode, fps, s)
			}
		}
	}
}

func TestBurstGroups(t *testing.T) {
	f := &fakeClock{now: 0, step: 100}
	p := New(Config{FPS: 1000, Burst: 10, Wait: Spin, Clock: newFakeClock(f)})
	at, n := run(t, p, f, 100, 64)
	if len(at) != 10 {
		t.Fatalf("%d grants for 100 frames with burst 10", len(at))
	}
	for i := range at {
		if n[i] != 10 {
			t.Errorf("grant %d released %d frames, want 10", i, n[i])
		}
		if i > 0 {
			if gap := at[i] - at[i-1]; gap < 10e6 || gap > 10e6+100 {
				t.Errorf("grant %d came %d ns after the previous, want 10 ms", i, gap)
			}
		}
	}
	// a burst larger than the batch: the rest follows without waiting
	f = &fakeClock{step: 100}
	p = New(Config{FPS: 1000, Burst: 100, Wait: Spin, Clock: newFakeClock(f)})
	at, n = run(t, p, f, 300, 64)
	if len(n) != 6 || n[0] != 64 || n[1] != 36 || at[1]-at[0] > 0 || at[2]-at[0] < 100e6 {
		t.Errorf("burst 100 in batches of 64: sizes %v at %v", n, at)
	}
}

func TestAutoBurst(t *testing.T) {
	for _, c := range []struct {
		fps  float64
		wait WaitMode
		want int
	}{
		{1000, Hybrid, 1}, {1e6, Spin, 1}, {10e6, Hybrid, 10}, {100e3, Hybrid, 1}, {100e3, Sleep, 5}, {1000, Sleep, 1},
	} {
		if b := New(Config{FPS: c.fps, Wait: c.wait}).Burst(); b != c.want {
			t.Errorf("auto burst at %v fps %v = %d, want %d", c.fps, c.wait, b, c.want)
		}
	}
}

func TestIFGForcesBurst1(t *testing.T) {
	r, err := ParseRate("ifg=10us")
	if err != nil {
		t.Fatal(err)
	}
	cfg := r.Config(1500, L2, 1)
	cfg.Burst = 32
	f := &fakeClock{step: 1}
	cfg.Clock, cfg.Wait = newFakeClock(f), Spin
	p := New(cfg)
	if p.Burst() != 1 {
		t.Fatalf("ifg burst = %d", p.Burst())
	}
	at, n := run(t, p, f, 1000, 64)
	for i := range n {
		if n[i] != 1 {
			t.Fatalf("grant %d released %d frames under ifg=", i, n[i])
		}
		if i > 0 && (at[i]-at[i-1] < 10_000-2 || at[i]-at[i-1] > 10_000+2) {
			t.Fatalf("gap %d = %d ns, want 10 µs", i, at[i]-at[i-1])
		}
	}
	// after a stall, owed frames still leave one by one, at most 1.5×
	// closer together
	f.now += 5e6
	at, n = run(t, p, f, 600, 64)
	for i := range n {
		if n[i] != 1 {
			t.Fatalf("catch-up grant %d released %d frames under ifg=", i, n[i])
		}
		if i > 0 && at[i]-at[i-1] < 6_666 {
			t.Fatalf("catch-up gap %d = %d ns, want ≥ 10 µs / 1.5", i, at[i]-at[i-1])
		}
	}
}

func TestCatchUpCapped(t *testing.T) {
	f := &fakeClock{step: 10}
	const fps = 100e3 // 10 µs
	p := New(Config{FPS: fps, Wait: Spin, Clock: newFakeClock(f)})
	var stop atomic.Bool
	for range 100 {
		p.Grant(64, &stop)
	}
	f.now += 1e9 // a one-second stall
	// the first grant after the stall releases 250 µs worth, not the debt
	g := p.Grant(1<<30, &stop)
	if g != 25 {
		t.Errorf("first grant after a 1 s stall = %d frames, want 250 µs worth (25)", g)
	}
	s := p.Stats()
	if s.Forgiven < 98_000 || s.Forgiven > 100_000 || s.Behind != 1 {
		t.Errorf("stats after stall: %+v", s)
	}
	if s.LagMaxNs < 1e9-20_000 || s.LagMaxNs > 1e9+20_000 {
		t.Errorf("schedule lag after a 1 s stall = %d ns, want about 1 s", s.LagMaxNs)
	}
	// owed frames are repaid at most 1.5× the rate: no 1 ms window holds
	// more than twice its share (100 frames)
	at, n := run(t, p, f, 5000, 64)
	for i := range at {
		sum := 0
		for j := i; j < len(at) && at[j]-at[i] < 1e6; j++ {
			sum += n[j]
		}
		if sum > 200 {
			t.Fatalf("%d frames in the 1 ms from grant %d", sum, i)
		}
	}
	// and the debt (10 ms = 1000 frames) is repaid within about 20 ms:
	// the schedule is back on track, the long-run average holds net of
	// the forgiven frames
	behind := p.Stats().Behind
	run(t, p, f, 1000, 64)
	if p.Stats().Behind != behind {
		t.Errorf("still behind schedule 50 ms after the stall")
	}
}

func TestReturn(t *testing.T) {
	f := &fakeClock{step: 1}
	p := New(Config{FPS: 1000, Wait: Spin, Clock: newFakeClock(f)})
	var stop atomic.Bool
	p.Grant(64, &stop)
	t0 := f.now
	p.Grant(64, &stop) // 1 ms later
	if f.now-t0 < 1e6-2 {
		t.Fatal("second grant did not wait")
	}
	p.Return(1) // the path was full
	t1 := f.now
	if g := p.Grant(64, &stop); g != 1 || f.now-t1 > 2 {
		t.Errorf("after Return the frame should be due at once: got %d after %d ns", g, f.now-t1)
	}
	if s := p.Stats(); s.Frames != 2 {
		t.Errorf("frames = %d, want 2", s.Frames)
	}
}

func TestStopPrompt(t *testing.T) {
	for _, mode := range []WaitMode{Spin, Sleep, Hybrid} {
		f := &fakeClock{step: 100}
		var stop atomic.Bool
		f.onSleep = func(target int64) int64 {
			stop.Store(true) // stop arrives during the first sleep
			return target
		}
		p := New(Config{FPS: 0.1, Wait: mode, Clock: newFakeClock(f)}) // a frame every 10 s
		if g := p.Grant(64, &stop); g != 1 {
			t.Fatalf("first grant = %d", g)
		}
		t0 := f.now
		if mode == Spin {
			go func() {}()
			f.step = 1000
			f.onSleep = nil
			// spin: stop is seen on the next clock read
			stop.Store(true)
		}
		if g := p.Grant(64, &stop); g != 0 {
			t.Errorf("%v: Grant after stop = %d", mode, g)
		}
		if d := f.now - t0; d > 1_100_000 {
			t.Errorf("%v: Grant returned %d ns after stop, want within 1 ms", mode, d)
		}
		if stop.Store(false); mode != Spin && f.sleeps != 1 {
			t.Errorf("%v: %d sleeps before noticing stop", mode, f.sleeps)
		}
	}
}

func TestLearnedOversleep(t *testing.T) {
	// Sleeps wake 40 µs late; hybrid learns it, sleeps shorter and spins
	// the rest, so lateness in fake time is just the spin step.
	f := &fakeClock{step: 50, oversleep: 40_000}
	p := New(Config{FPS: 1000, Wait: Hybrid, Clock: newFakeClock(f)})
	if err := p.Setup(); err != nil {
		t.Fatal(err)
	}
	run(t, p, f, 2000, 64)
	mean, _ := p.Oversleep()
	if mean < 39_000 || mean > 41_000 {
		t.Errorf("learned oversleep %v, want about 40 µs", mean)
	}
	s := p.Stats()
	if s.LatenessMeanNs > 200 || s.LatenessP99Ns > 200 {
		t.Errorf("hybrid lateness mean %d p99 %d ns with a 50 ns clock step", s.LatenessMeanNs, s.LatenessP99Ns)
	}
	// sleep mode aims at the deadline: late by less than the oversleep
	f = &fakeClock{step: 50, oversleep: 40_000}
	p = New(Config{FPS: 1000, Wait: Sleep, Clock: newFakeClock(f)})
	_ = p.Setup()
	run(t, p, f, 2000, 64)
	if s := p.Stats(); s.LatenessMeanNs > 5_000 {
		t.Errorf("sleep lateness mean %d ns with a constant 40 µs oversleep", s.LatenessMeanNs)
	}
	if f.reads > 4*2000+100 {
		t.Errorf("sleep mode read the clock %d times for 2000 frames: it spun", f.reads)
	}
}

func TestUnlimited(t *testing.T) {
	p := New(Config{})
	var stop atomic.Bool
	if !p.Unlimited() || p.Grant(64, &stop) != 64 {
		t.Error("unlimited pacer did not grant the batch")
	}
	stop.Store(true)
	if p.Grant(64, &stop) != 0 {
		t.Error("unlimited pacer granted after stop")
	}
}

func TestMergeStats(t *testing.T) {
	var ss []Stats
	for i := range 3 {
		f := &fakeClock{step: int64(100 * (i + 1))}
		p := New(Config{FPS: 1000, Wait: Spin, Clock: newFakeClock(f)})
		run(t, p, f, 100, 64)
		ss = append(ss, p.Stats())
	}
	m := MergeStats(ss...)
	if m.FPS != 3000 || m.Frames != 300 || m.Grants != ss[0].Grants+ss[1].Grants+ss[2].Grants {
		t.Errorf("merged %+v", m)
	}
	if m.LatenessMaxNs != max(ss[0].LatenessMaxNs, ss[1].LatenessMaxNs, ss[2].LatenessMaxNs) {
		t.Errorf("merged max %d", m.LatenessMaxNs)
	}
	if m.LatenessP50Ns < ss[0].LatenessP50Ns || m.LatenessP50Ns > ss[2].LatenessP50Ns || m.Quantile(100) < m.LatenessP99Ns {
		t.Errorf("merged p50 %d outside the workers' %d..%d", m.LatenessP50Ns, ss[0].LatenessP50Ns, ss[2].LatenessP50Ns)
	}
}

func TestGrantNoAlloc(t *testing.T) {
	f := &fakeClock{step: 10, oversleep: 1000}
	p := New(Config{FPS: 1e6, Wait: Hybrid, Clock: newFakeClock(f)})
	var stop atomic.Bool
	if a := testing.AllocsPerRun(1000, func() { p.Grant(64, &stop) }); a != 0 {
		t.Errorf("Grant allocates %v times", a)
	}
}

func TestOversleepPercentile(t *testing.T) {
	p := New(Config{FPS: 1000, Wait: Hybrid})
	// uniform 40..60 µs (a fixed LCG), with a 5 ms outlier every 200
	// samples: the 90th percentile is about 58 µs
	x := uint64(1)
	for i := range 20000 {
		x = x*6364136223846793005 + 1442695040888963407
		os := 40_000 + int64(x>>33)%20_000
		if i%200 == 0 {
			os = 5_000_000
		}
		p.learn(os)
	}
	mean, p90 := p.Oversleep()
	if p90 < 56_000 || p90 > 60_500 {
		t.Errorf("p90 estimate %v, want about 58 µs", p90)
	}
	if mean < 45_000 || mean > 60_000 {
		t.Errorf("mean %v, want about 50 µs", mean)
	}
}

// Setup with a priority moves only the calling thread to SCHED_FIFO; the
// thread is locked and then discarded with its goroutine.
func TestSetupPriority(t *testing.T) {
	type res struct {
		err          error
		policy, prio int
	}
	ch := make(chan res)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		p := New(Config{FPS: 1000, Wait: Hybrid, Priority: 3})
		err := p.Setup()
		pol, prio, _ := sys.ThreadSchedPolicy()
		ch <- res{err, pol, prio}
	}()
	r := <-ch
	if pol, _, _ := sys.ThreadSchedPolicy(); pol != 0 {
		t.Errorf("the test's own thread has policy %d", pol)
	}
	if err := New(Config{FPS: 1000, Priority: 100}).Setup(); err == nil {
		t.Error("priority 100 accepted")
	}
	switch {
	case r.err == nil:
		if r.policy != 1 || r.prio != 3 {
			t.Errorf("after Setup the thread has policy %d priority %d, want SCHED_FIFO (1) 3", r.policy, r.prio)
		}
	case errors.Is(r.err, os.ErrPermission):
		// An earned skip: without the capability the SCHED_FIFO path is
		// not tested, and CI=true makes that a failure.
		testbed.Skip(t, "SCHED_FIFO not permitted (%v): run the tests as root or grant CAP_SYS_NICE", r.err)
	default:
		t.Errorf("Setup: %v", r.err)
	}
}

func TestStatsNotes(t *testing.T) {
	f := &fakeClock{step: 10}
	p := New(Config{FPS: 100e3, Wait: Spin, Clock: newFakeClock(f)})
	run(t, p, f, 1000, 64)
	if n := p.Stats().Notes(); n != nil {
		t.Errorf("notes for a kept schedule: %q", n)
	}
	f.now += 50e6 // a 50 ms stall
	run(t, p, f, 1000, 64)
	n := p.Stats().Notes()
	if len(n) != 2 || !strings.Contains(n[0], "frame intervals (40.0 ms)") || !strings.Contains(n[1], "behind schedule") {
		t.Errorf("notes after a stall: %q", n)
	}
	// The frames were all sent (late): the note must not say any was
	// dropped (it once said "3999 frames were dropped from the schedule").
	if strings.Contains(n[0], "frames were dropped") || !strings.Contains(n[0], "no frame was dropped") {
		t.Errorf("the stall note says frames were dropped, or does not say none was: %q", n[0])
	}
}

// A short stall (under 1 ms of debt) at 100 kpps is repaid one frame at a
// time at 1.08× the rate: every gap stays within ±10 % of the interval,
// even with a path that needs 7 µs per frame.
func TestGentleCatchUp(t *testing.T) {
	f := &fakeClock{step: 10}
	p := New(Config{FPS: 100e3, Wait: Spin, Clock: newFakeClock(f)})
	var stop atomic.Bool
	var at []int64
	for i := range 3000 {
		if i == 1000 {
			f.now += 300_000 // a 300 µs stall
		}
		if n := p.Grant(64, &stop); n != 1 {
			t.Fatalf("grant %d released %d frames", i, n)
		}
		at = append(at, f.now)
		f.now += 7_000 // the path's cost per frame
	}
	for i := 1001; i < len(at); i++ {
		if g := at[i] - at[i-1]; g < 9_000 || g > 11_000 {
			t.Fatalf("gap %d after the stall = %d ns, want within ±10 %% of 10 µs", i, g)
		}
	}
	if s := p.Stats(); s.Behind < 300 || f.now-p.next > 20_000 {
		t.Errorf("behind %d grants; schedule lag %d ns at the end", s.Behind, f.now-p.next)
	}
}

// boostRecorder replaces a pacer's scheduler switch: it records the
// policy and can refuse the real-time one.
type boostRecorder struct {
	on       bool
	switches int
	refuse   bool
}

func (b *boostRecorder) set(on bool) error {
	if on && b.refuse {
		return syscall.EPERM
	}
	b.on = on
	b.switches++
	return nil
}

// boostedPacer sets up a pacer of cfg on the fake clock f whose scheduler
// switches go to the returned recorder.
func boostedPacer(t *testing.T, f *fakeClock, cfg Config) (*Pacer, *boostRecorder) {
	t.Helper()
	cfg.Clock = newFakeClock(f)
	p := New(cfg)
	b := &boostRecorder{}
	p.setRealtime = b.set
	if err := p.Setup(); err != nil {
		t.Fatal(err)
	}
	return p, b
}

func TestWakeBoost(t *testing.T) {
	f := &fakeClock{step: 100, oversleep: 60_000}
	p, b := boostedPacer(t, f, Config{FPS: 1000, Wait: Hybrid})
	if b.on || b.switches != 2 {
		t.Fatalf("setup left the policy real-time=%v after %d switches, want a check and back", b.on, b.switches)
	}
	// 1 kpps with 3 µs of work per frame: every sleep is boosted, and the
	// thread stays boosted from one frame to the next (no switch per frame)
	var stop atomic.Bool
	sleeps := f.sleeps
	for i := range 200 {
		if p.Grant(64, &stop) != 1 {
			t.Fatal("grant")
		}
		if i > 0 && !b.on { // the first grant goes at once
			t.Fatal("a grant after a long sleep returned unboosted")
		}
		f.now += 3_000
	}
	if b.switches > 3 {
		t.Errorf("%d policy switches for 200 frames, want one boost kept", b.switches)
	}
	if got := p.WakeBoost(); !strings.HasPrefix(got, "on: SCHED_FIFO 1 during ") || p.boosts < f.sleeps-sleeps-1 {
		t.Errorf("WakeBoost() = %q after %d boosted of %d sleeps", got, p.boosts, f.sleeps-sleeps)
	}
	// the work between grants grows to 300 µs: the boost is dropped, so
	// the work does not run ahead of other threads
	for range 50 {
		p.Grant(64, &stop)
		f.now += 300_000
	}
	if b.on {
		t.Error("still boosted with 300 µs of work per frame")
	}
	// Done leaves the boost
	for range 50 {
		p.Grant(64, &stop)
		f.now += 1_000
	}
	p.Done()
	if b.on {
		t.Error("still boosted after Done")
	}
}

func TestWakeBoostNotAtHighRates(t *testing.T) {
	// at 10 kpps hybrid spins or sleeps briefly: never boosted
	f := &fakeClock{step: 100, oversleep: 20_000}
	p, b := boostedPacer(t, f, Config{FPS: 10_000, Wait: Hybrid})
	run(t, p, f, 2000, 64)
	if b.switches != 2 || p.boosts != 0 {
		t.Errorf("%d switches, %d boosted sleeps at 10 kpps", b.switches, p.boosts)
	}
	// permitted but never taken: the report says it was not needed, not
	// "on: SCHED_FIFO 1 during 0 sleeps"
	if got := p.WakeBoost(); strings.Contains(got, "during 0") || !strings.HasPrefix(got, "not needed") {
		t.Errorf("WakeBoost() = %q with no boosted sleep, want \"not needed…\"", got)
	}
	// the sleep wait never takes it
	f = &fakeClock{step: 100, oversleep: 60_000}
	p, b = boostedPacer(t, f, Config{FPS: 1000, Wait: Sleep, WakeBoost: BoostOn})
	run(t, p, f, 200, 64)
	if b.switches != 0 || p.WakeBoost() != "" {
		t.Errorf("sleep wait: %d policy switches, report %q", b.switches, p.WakeBoost())
	}
}

func TestWakeBoostPermission(t *testing.T) {
	for _, mode := range []Boost{BoostAuto, BoostOn, BoostOff} {
		f := &fakeClock{step: 100}
		p := New(Config{FPS: 1000, Wait: Hybrid, Clock: newFakeClock(f), WakeBoost: mode})
		b := boostRecorder{refuse: true}
		p.setRealtime = b.set
		err := p.Setup()
		switch mode {
		case BoostOn:
			if err == nil || !errors.Is(err, syscall.EPERM) || !strings.Contains(err.Error(), "CAP_SYS_NICE") {
				t.Errorf("on without permission: %v", err)
			}
		case BoostAuto:
			if err != nil || !strings.Contains(p.WakeBoost(), "not permitted") {
				t.Errorf("auto without permission: %v, %q", err, p.WakeBoost())
			}
			run(t, p, f, 100, 64)
			if b.on || p.boosts != 0 {
				t.Error("boosted without permission")
			}
		case BoostOff:
			if err != nil || p.WakeBoost() != "" || b.switches != 0 {
				t.Errorf("off: %v, %q, %d switches", err, p.WakeBoost(), b.switches)
			}
		}
	}
	for _, s := range []string{"", "auto", "on", "off", "ON"} {
		if _, err := ParseBoost(s); err != nil {
			t.Errorf("ParseBoost(%q): %v", s, err)
		}
	}
	if _, err := ParseBoost("yes"); err == nil {
		t.Error("ParseBoost(yes) accepted")
	}
}
