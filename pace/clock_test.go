package pace

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/sys"
)

func TestCPUFlags(t *testing.T) {
	info := []byte("processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu tsc constant_tsc nonstop_tsc rdtscp\nbogomips\t: 4191.98\n\nprocessor\t: 1\nflags\t\t: fpu\n")
	f := cpuFlags(info)
	for _, want := range []string{"fpu", "tsc", "constant_tsc", "nonstop_tsc", "rdtscp"} {
		if !f[want] {
			t.Errorf("flag %s missing from %v", want, f)
		}
	}
	if f["bogomips"] || len(f) != 5 {
		t.Errorf("flags = %v, want the first flags line only", f)
	}
	if len(cpuFlags([]byte("processor : 0\n"))) != 0 {
		t.Error("flags found where there is no flags line")
	}
}

func TestRatioAndMulShift(t *testing.T) {
	// 2.5 GHz: 0.4 ns per tick
	m := ratio(400_000_000, 1_000_000_000)
	if got := mulShift32(1_000_000_000, m); got < 399_999_999 || got > 400_000_000 {
		t.Errorf("1e9 ticks at 0.4 ns = %d ns", got)
	}
	// a day of ticks at 3 GHz must not overflow; 32 fraction bits keep the
	// relative error below 1e-9 (the conversion is re-anchored every second)
	ticks := uint64(3e9 * 86400)
	m = ratio(1e9, 3e9)
	if got, want := mulShift32(ticks, m), uint64(86400e9); got > want || want-got > 86400 {
		t.Errorf("a day of ticks = %d ns, want %d", got, want)
	}
	if ratio(0, 5) != 1<<32 || ratio(5, 0) != 1<<32 {
		t.Error("degenerate ratio should fall back to 1")
	}
}

func TestNewClockModes(t *testing.T) {
	m, err := NewClock("monotonic")
	if err != nil || m.TSC() || m.Source() != "monotonic" {
		t.Fatalf("monotonic: %v %v", m, err)
	}
	if _, err := NewClock("hpet"); err == nil {
		t.Error("unknown clock accepted")
	}
	a, err := NewClock("auto")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("auto: %s (%s) %.0f Hz", a.Source(), a.Why(), a.TSCHz())
	ok, why := tscInvariant("/proc/cpuinfo")
	c, err := NewClock("tsc")
	if !ok {
		if err == nil {
			t.Errorf("--clock tsc succeeded although %s", why)
		}
		return
	}
	if err != nil || !c.TSC() || c.Source() != "tsc" {
		t.Fatalf("tsc: %v %v", c, err)
	}
	// The TSC clock reads the CLOCK_MONOTONIC timescale: compare with the
	// vDSO clock read in between (a calibration check, not a timing one;
	// the bound is generous for a shared VM).
	for range 100 {
		a := c.Now()
		b := sys.MonotonicNs()
		d := c.Now()
		if b < a-1_000_000 || b > d+1_000_000 {
			t.Fatalf("tsc %d..%d vs monotonic %d: off by more than 1 ms", a, d, b)
		}
		if d < a {
			t.Fatalf("tsc clock went back: %d then %d", a, d)
		}
	}
}

// Readers on several goroutines while the conversion is re-anchored all
// the time: no torn reads (run with -race), and no reader sees the clock
// step back by more than the re-anchoring error. The number of
// re-anchorings is fixed (a refiner goroutine makes them while the readers
// read), so the test does not depend on how fast the clock reads are.
func TestTSCRefineConcurrent(t *testing.T) {
	if !sys.TSCAvailable {
		t.Skip("no TSC on this architecture (x86-64 only): the TSC clock does not exist here")
	}
	// Built directly rather than with NewClock("tsc"), which refuses a TSC
	// the CPU does not call invariant (some hypervisors hide the bit): the
	// double-buffered conversion is the same code either way.
	invariant, why := tscInvariant("/proc/cpuinfo")
	c := &Clock{kind: clockTSC, refineNs: 10_000} // readers re-anchor every 10 µs too
	c.calibrate(20 * time.Millisecond)
	const refinements = 2000
	var stop atomic.Bool
	done := make(chan int64)
	for range 4 {
		go func() {
			var worst int64
			prev := c.Now()
			for !stop.Load() {
				now := c.Now()
				worst = max(worst, prev-now)
				prev = now
			}
			done <- worst
		}()
	}
	pubs := func() uint64 { return (c.params[0].gen.Load() + c.params[1].gen.Load()) / 2 }
	for pubs() < refinements {
		c.refine()
		runtime.Gosched() // let the readers in between
	}
	stop.Store(true)
	for range 4 {
		back := <-done
		switch {
		case back <= 2_000:
		case invariant:
			t.Errorf("the clock stepped back by %d ns", back)
		default:
			t.Logf("the clock stepped back by %d ns; not an error where the TSC is not invariant (%s)", back, why)
		}
	}
	if d := c.Now() - sys.NanotimeNs(); d > 1_000_000 || d < -1_000_000 {
		t.Errorf("after %d refinements the TSC clock is %d ns off CLOCK_MONOTONIC", pubs(), d)
	}
}

// The TSC clock reads what CLOCK_MONOTONIC reads, to tens of nanoseconds,
// from its first second on: a receiver on the same host stamps frames with
// CLOCK_MONOTONIC and measures latencies of a few hundred nanoseconds
// against the sender's TSC stamps. Refined once a second, the 20 ms
// calibration's rate error let the clock run hundreds of nanoseconds
// ahead before the first refinement, and the receiver counted frames
// that arrived "before" they were sent. Reads the scheduler interrupted
// (a bracket of the two monotonic reads wider than 300 ns) are left out.
func TestTSCAgreesWithMonotonic(t *testing.T) {
	if !sys.TSCAvailable {
		t.Skip("no TSC on this architecture (x86-64 only): the TSC clock does not exist here")
	}
	c := &Clock{kind: clockTSC, refineNs: refineEvery.Nanoseconds()} // as NewClock("tsc") builds it
	c.calibrate(20 * time.Millisecond)
	var worst, reads int64
	for end := sys.NanotimeNs() + time.Second.Nanoseconds(); ; {
		n0 := sys.NanotimeNs()
		v := c.Now()
		n1 := sys.NanotimeNs()
		if n0 > end {
			break
		}
		if n1-n0 < 300 {
			reads++
			worst = max(worst, n0-v, v-n1)
		}
		time.Sleep(100 * time.Microsecond)
	}
	if reads < 100 || worst > 100 {
		t.Errorf("over 1 s the TSC clock was up to %d ns off CLOCK_MONOTONIC (%d undisturbed reads); want at most 100 ns", worst, reads)
	}
}
