package pace

import (
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/wpg-dev/wpg/internal/hist"
	"github.com/wpg-dev/wpg/internal/sys"
)

// Config configures one Pacer (one worker).
type Config struct {
	// FPS is this pacer's frame rate: the worker's share, i.e.
	// rate.Split(workers).FramesPerSecond(meanFrameBytes, layer). Zero,
	// negative or +Inf means unlimited.
	FPS float64
	// Burst is the number of frames one grant releases back to back (the
	// bucket depth); 0 picks it automatically: 1 unless the frame interval
	// is shorter than the wait resolution (1 µs for spin and hybrid, 50 µs
	// for sleep), then as many frames as fit in that resolution.
	Burst int
	// IFG forces a burst of 1 whatever Burst says (an ifg= rate), also
	// when catching up after a stall.
	IFG bool
	// Wait is how the pacer waits for a deadline.
	Wait WaitMode
	// Clock reads the time; nil means a CLOCK_MONOTONIC clock.
	Clock *Clock
	// Priority, when 1–99, makes Setup move the worker's thread (only
	// that thread) to SCHED_FIFO at this priority, so that it runs the
	// moment its sleep ends instead of queueing behind other processes
	// on a busy host. It needs CAP_SYS_NICE. Combine it with hybrid or
	// sleep; a spinning real-time thread starves everything else on its
	// core (the kernel's RT throttling leaves others 5 %).
	Priority int
	// WakeBoost raises the worker's thread to SCHED_FIFO (priority 1)
	// for the long sleeps of the hybrid wait, so that the thread runs the
	// moment its timer fires instead of queueing behind other tasks; it
	// drops back to the normal scheduler whenever the next wait is short
	// (the thread would spin) or the caller's work between grants grows
	// long, so a boosted thread never spins or works for long ahead of
	// others. BoostAuto uses it where permitted (CAP_SYS_NICE or
	// RLIMIT_RTPRIO); BoostOn makes Setup fail without the permission.
	// Only hybrid takes it (with sleep it measured worse: its early wakes
	// sleep again); ignored with Priority, Spin, Sleep and when unlimited.
	WakeBoost Boost
}

const (
	// catchUpWindow caps the debt after a stall: the schedule skips the
	// intervals of frames more than this far overdue (counted in
	// Stats.Forgiven; the frames still go, later), so a stall never turns
	// into a flood.
	catchUpWindow = 10 * time.Millisecond
	// catchUpSpeed is how much faster than the target rate owed frames are
	// repaid: after a stall no 1 ms carries much more than 1.5 times its
	// share, while a 10 ms debt is repaid within 20 ms.
	catchUpSpeed = 1.5
	// catchUpQuantum caps one catch-up grant at this much time's worth of
	// frames (or one burst, if larger): owed frames trickle out instead
	// of leaving as one lump, so that with catchUpSpeed no 1 ms window
	// holds more than about 1.75 times its share.
	catchUpQuantum = 250 * time.Microsecond
	// A small debt (under gentleDebt, at rates whose interval is at least
	// gentleMinPeriod, where a grant per burst is affordable) is repaid
	// one burst at a time at gentleSpeed times the rate, so that the gaps
	// stay within ±10 % of the interval while the sender catches up. 1.08
	// rather than 1.1 leaves room for the path's own jitter: on a veth
	// pair the gaps spread by about ±0.3 µs between the grant and the
	// wire, which pushed a tenth of 1.1× gaps (9.09 µs) below 9 µs.
	gentleDebt      = time.Millisecond
	gentleMinPeriod = 5 * time.Microsecond
	gentleSpeed     = 1.08
	// maxSleepChunk bounds one sleep so that Grant notices stop within
	// about a millisecond even at very low rates.
	maxSleepChunk = time.Millisecond
	// spinGuard is how much earlier than the learned oversleep (its 90th
	// percentile) hybrid aims its sleep; the rest is spun.
	spinGuard = 2 * time.Microsecond
	// maxLead caps how long before a deadline hybrid wakes to spin. A
	// learned oversleep beyond it means a contended host, where a spinning
	// thread loses its turn to the scheduler anyway and would only burn
	// the CPU others need (at 1 kpps the cap bounds spinning to 20 % of a
	// core).
	maxLead = 200 * time.Microsecond
	// minSleep: a hybrid wait shorter than this (beyond the lead) spins.
	minSleep = 5 * time.Microsecond
	// sleepSpinMax: sleep mode spins a remainder up to this long after an
	// early wake instead of sleeping again.
	sleepSpinMax = 20 * time.Microsecond
	// learnClamp bounds one oversleep sample, so that one stolen vCPU
	// slice does not throw the average off.
	learnClamp = time.Millisecond
	// histMax is the largest lateness the histogram records exactly.
	histMax = 60 * time.Second
)

// Pacer is a token bucket that releases frames at a fixed rate: Grant
// blocks until the next group of frames is due and says how many may go.
// The schedule is kept in fixed point (2⁻⁶⁴ ns), so the long-run average
// is exact. A Pacer belongs to one worker and is not safe for concurrent
// use; Stats may be called after the worker stopped calling Grant.
type Pacer struct {
	clk       *Clock
	wait      WaitMode
	priority  int
	unlimited bool
	fps       float64
	burst     int
	catchMax  int // frames in one catch-up grant

	// the schedule: next is when the next unsent frame is due
	periodF    float64 // ns
	periodNs   int64
	periodFrac uint64 // 2⁻⁶⁴ ns
	next       int64
	nextFrac   uint64
	notBefore  int64 // catch-up spacing
	due        int64 // when the first frame of the last grant was due
	groupLeft  int   // frames of the current burst not yet handed out
	started    bool
	capNs      int64
	tt         Timetable // the schedule followed instead of the fixed rate (follow.go)

	// learned oversleep (ns): an exponentially weighted mean, and a
	// streaming estimate of its 90th percentile (robust to the rare
	// millisecond outliers of a shared host)
	osMean, osP90 int64

	// wake boost: whether it is permitted and in use, whether the
	// thread is boosted now, when the last grant returned, the moving
	// average of the caller's work between grants (ns), and how it
	// switches policy (a field so that tests can watch it)
	boost       Boost
	boostOK     bool
	boosted     bool
	boostWhy    string
	lastGrant   int64
	workNs      int64
	boosts      int64
	setRealtime func(on bool) error

	// stats
	grants, frames, forgiven, behind int64
	latSum, latMax, lagMax           int64
	hist                             *hist.Hist

	// live lateness for readers on other goroutines (Collect): each grant
	// is recorded into win as well, and every liveEvery win goes to the
	// reader through filled, taking an empty one from spares; with no
	// spare left (nobody reads), win keeps counting. The worker never
	// waits for the reader.
	win            *hist.Hist
	winEnd         int64
	filled, spares chan *hist.Hist
}

// New returns a pacer for cfg. The schedule starts at the first Grant.
func New(cfg Config) *Pacer {
	p := &Pacer{
		clk:      cfg.Clock,
		wait:     cfg.Wait,
		priority: cfg.Priority,
		fps:      cfg.FPS,
		capNs:    catchUpWindow.Nanoseconds(),
		osMean:   50_000,
		osP90:    50_000,
		hist:     newHist(),
		boost:    cfg.WakeBoost,
	}
	if p.clk == nil {
		p.clk = &Clock{kind: clockMonotonic, why: "default"}
	}
	p.setRealtime = func(on bool) error {
		switch {
		case p.clk.kind == clockFake: // tests: fake time, real threads untouched
			return nil
		case on:
			return sys.SetThreadFIFO(boostPriority)
		}
		return sys.SetThreadNormal()
	}
	if !(cfg.FPS > 0) || math.IsInf(cfg.FPS, 1) {
		p.unlimited, p.fps = true, 0
		return p
	}
	p.initLive()
	p.periodF = 1e9 / cfg.FPS
	whole, frac := math.Modf(p.periodF)
	p.periodNs = int64(whole)
	if f := frac * (1 << 64); f < 1<<64 {
		p.periodFrac = uint64(f)
	} else {
		p.periodFrac = math.MaxUint64
	}
	p.burst = cfg.Burst
	if cfg.IFG {
		p.burst = 1
	}
	if p.burst <= 0 {
		res := time.Microsecond
		if cfg.Wait == Sleep {
			res = 50 * time.Microsecond
		}
		p.burst = max(1, int(float64(res.Nanoseconds())/p.periodF))
	}
	p.catchMax = max(p.burst, int(math.Ceil(float64(catchUpQuantum.Nanoseconds())/p.periodF)))
	if cfg.IFG {
		p.catchMax = 1 // even catching up, frames leave one by one (at most 1.5× closer)
	}
	return p
}

// Setup prepares the calling thread (the worker's own locked, pinned
// thread) before the loop: for the sleeping wait modes it sets the timer
// slack to 1 µs (PR_SET_TIMERSLACK; the default 50 µs would be added to
// every wake-up) and measures a few sleeps to seed the learned oversleep;
// with Config.Priority it moves the thread to SCHED_FIFO. Errors unwrap
// to the system error (EPERM without CAP_SYS_NICE).
func (p *Pacer) Setup() error {
	if p.unlimited {
		return nil
	}
	if p.priority != 0 && p.clk.kind != clockFake {
		if err := sys.SetThreadFIFO(p.priority); err != nil {
			return fmt.Errorf("pacer: real-time priority: %w", err)
		}
	}
	if p.wait == Spin {
		return nil
	}
	if p.clk.kind != clockFake {
		if err := sys.SetTimerSlack(1000); err != nil {
			return err
		}
	}
	if err := p.setupBoost(); err != nil {
		return err
	}
	for range 32 {
		t := p.clk.Now() + 100_000
		p.clk.sleepUntil(t)
		p.learn(p.clk.Now() - t)
	}
	return nil
}

// Burst returns the frames per grant in use (Config.Burst or the automatic
// choice).
func (p *Pacer) Burst() int { return p.burst }

// Unlimited reports whether the pacer lets everything through.
func (p *Pacer) Unlimited() bool { return p.unlimited }

// Grant blocks until at least one frame may be sent and returns how many
// (1..max) may go now. It returns 0 promptly (within about 1 ms) once stop
// is set. A group of Burst frames is released at the group's due time.
// When the caller is behind schedule, a debt under 1 ms (at intervals of
// 5 µs or more) is repaid one burst at a time at 1.08 times the rate, so
// gaps stay within ±10 %; a larger one in grants of at most 250 µs worth
// (or a burst, and at most max) at 1.5 times the rate; beyond 10 ms of
// debt the schedule skips ahead (the owed frames go later, not faster).
// Grant does not allocate.
func (p *Pacer) Grant(max int, stop *atomic.Bool) int {
	if max <= 0 || stop.Load() {
		return 0
	}
	if p.unlimited {
		return max
	}
	if p.tt != nil {
		return p.grantTimed(max, stop) // follow.go
	}
	if p.groupLeft > 0 { // the rest of a burst goes without waiting
		n := min(p.groupLeft, max)
		p.groupLeft -= n
		p.take(n)
		return n
	}
	now := p.clk.Now()
	if !p.started {
		p.started = true
		p.next = now
	} else if p.boostOK {
		p.workNs += (now - p.lastGrant - p.workNs) / 8
	}
	deadline := max64(p.next, p.notBefore)
	if now = p.await(now, deadline, stop); now < 0 {
		return 0
	}

	lag := now - p.next
	if lag > p.lagMax {
		p.lagMax = lag
	}
	if lag > p.capNs { // a stall: forgive the excess
		k := int64(float64(lag-p.capNs) / p.periodF)
		p.advance(k)
		p.forgiven += k
	}
	owed := int64(float64(now-p.next)/p.periodF) + 1
	n := p.burst
	if owed > int64(n) {
		p.behind++
		if p.periodF >= float64(gentleMinPeriod.Nanoseconds()) && now-p.next < gentleDebt.Nanoseconds() {
			n = min(n, max)
			p.take(n)
			p.notBefore = now + int64(float64(n)*p.periodF/gentleSpeed)
			return n
		}
		n = int(min(owed, int64(max), int64(p.catchMax)))
		p.take(n)
		p.notBefore = now + int64(float64(n)*p.periodF/catchUpSpeed)
		return n
	}
	if n > max {
		p.groupLeft = n - max
		n = max
	}
	p.take(n)
	if p.periodF >= float64(gentleMinPeriod.Nanoseconds()) {
		// a grant a little late (under one interval) must not be followed
		// by a short gap either
		p.notBefore = now + int64(float64(p.burst)*p.periodF/gentleSpeed)
	}
	return n
}

// Return gives back n frames granted but not sent (the path was full), so
// that they are due again at once and the average rate holds.
func (p *Pacer) Return(n int) {
	if n <= 0 || p.unlimited {
		return
	}
	if p.tt != nil { // follow.go: the frames are still the timetable's
		p.frames -= int64(n)
		return
	}
	p.frames -= int64(n)
	p.notBefore = 0
	hi, lo := bits.Mul64(uint64(n), p.periodFrac)
	var borrow uint64
	p.nextFrac, borrow = bits.Sub64(p.nextFrac, lo, 0)
	p.next -= int64(n)*p.periodNs + int64(hi) + int64(borrow)
}

// await waits for the grant due at deadline (now: the clock at the
// call), first leaving a wake boost the wait does not need (a short wait
// ahead, where the thread would spin, or long work), and records how late
// the grant is. It returns the clock after the wait, or < 0 when stop
// ended it.
func (p *Pacer) await(now, deadline int64, stop *atomic.Bool) int64 {
	if p.boosted && (deadline-now < boostMinSleep.Nanoseconds() || p.workNs > boostMaxWork.Nanoseconds()) {
		p.unboost()
	}
	if now < deadline {
		if now = p.waitUntil(deadline, stop); now < 0 {
			return now
		}
	}
	late := now - deadline
	p.lastGrant = now
	p.grants++
	p.latSum += late
	p.latMax = max64(p.latMax, late)
	p.recordLate(min(late, histMax.Nanoseconds()), now)
	return now
}

func (p *Pacer) take(n int) {
	p.frames += int64(n)
	p.due = p.next
	p.advance(int64(n))
}

// Due returns when the first frame of the last grant was due (ns on the
// pacer's clock, CLOCK_MONOTONIC timescale) and the interval to each next
// one; ok is false when unlimited or before the first grant. It
// implements engine.ScheduledPacer.
func (p *Pacer) Due() (firstNs int64, periodNs float64, ok bool) {
	if p.unlimited || !p.started {
		return 0, 0, false
	}
	return p.due, p.periodF, true
}

// advance moves the schedule on by n frame intervals, exactly.
func (p *Pacer) advance(n int64) {
	hi, lo := bits.Mul64(uint64(n), p.periodFrac)
	var carry uint64
	p.nextFrac, carry = bits.Add64(p.nextFrac, lo, 0)
	p.next += n*p.periodNs + int64(hi) + int64(carry)
}

// waitUntil waits for the clock to reach deadline in the configured mode
// and returns the clock then, or -1 once stop is set.
func (p *Pacer) waitUntil(deadline int64, stop *atomic.Bool) int64 {
	for {
		now := p.clk.Now()
		if now >= deadline {
			return now
		}
		if stop.Load() {
			return -1
		}
		rem := deadline - now
		var target int64
		switch p.wait {
		case Spin:
			sys.Pause()
			continue
		case Hybrid:
			lead := min(max64(0, p.osP90)+spinGuard.Nanoseconds(), maxLead.Nanoseconds())
			if rem <= lead+minSleep.Nanoseconds() {
				sys.Pause()
				continue
			}
			target = deadline - lead
			if target-now > maxSleepChunk.Nanoseconds() {
				target = now + maxSleepChunk.Nanoseconds()
			}
			p.boostSleep(now, deadline-lead, lead)
			if p.boosted {
				p.boosts++
			}
		default: // Sleep
			if rem <= sleepSpinMax.Nanoseconds() && rem < p.osMean {
				sys.Pause() // an early wake: finish the few µs left
				continue
			}
			target = deadline - max64(0, p.osMean)
			if target <= now {
				target = deadline
			}
			if target-now > maxSleepChunk.Nanoseconds() {
				target = now + maxSleepChunk.Nanoseconds()
			}
		}
		p.clk.sleepUntil(target)
		p.learn(p.clk.Now() - target)
	}
}

// learn folds one oversleep sample into the moving average (weight 1/8)
// and the percentile estimate: a sample above the estimate raises it by
// nine steps, one below lowers it by one, which settles where 90 % of the
// samples are below (a step is 1/128 of the estimate, at least 50 ns).
func (p *Pacer) learn(os int64) {
	os = min(max(os, -learnClamp.Nanoseconds()), learnClamp.Nanoseconds())
	p.osMean += (os - p.osMean) / 8
	step := max(p.osP90/128, 50)
	if os > p.osP90 {
		p.osP90 += 9 * step
	} else {
		p.osP90 -= step
	}
}

// Oversleep returns the learned mean oversleep and the estimate of its
// 90th percentile (what hybrid subtracts from a sleep, plus 2 µs).
func (p *Pacer) Oversleep() (mean, p90 time.Duration) {
	return time.Duration(p.osMean), time.Duration(p.osP90)
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
