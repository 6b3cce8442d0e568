package pace

import (
	"bufio"
	"bytes"
	"fmt"
	"math/bits"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wpg-dev/wpg/internal/inputerr"
	"github.com/wpg-dev/wpg/internal/sys"
)

type clockKind uint8

// tscParams converts a TSC reading: ns = baseNs + (tsc-baseTSC)·mult/2³².
// gen is odd while the slot is being written.
type tscParams struct {
	gen         atomic.Uint64
	baseTSC     atomic.Uint64
	baseNs      atomic.Int64
	mult        atomic.Uint64
	refineTicks atomic.Uint64 // refine once the counter passed baseTSC+refineTicks
}

const (
	clockMonotonic clockKind = iota
	clockTSC
	clockFake
)

// Clock reads time in nanoseconds on the CLOCK_MONOTONIC timescale, from the
// TSC when it is invariant (x86-64) or from the vDSO monotonic clock. TSC
// readings are converted with a rate calibrated against CLOCK_MONOTONIC at
// NewClock and re-anchored every refineEvery (10 ms) while the clock is
// read, with the rate measured over everything since NewClock, so the
// value stays comparable with sys.MonotonicNs in another process on the
// same host to tens of nanoseconds from the start: a receiver on the same
// host measures latencies of a few hundred nanoseconds with it. A Clock
// is safe for concurrent use.
type Clock struct {
	kind clockKind
	why  string

	// TSC conversion, double-buffered: a refinement writes the inactive
	// slot (under its own generation counter) and then flips cur, so a
	// reader never waits for a writer that was preempted mid-update.
	params   [2]tscParams
	cur      atomic.Uint32
	refining atomic.Bool
	refineNs int64 // how often to refine (refineEvery; shorter in tests)
	// the first calibration point: the long baseline for refinements
	firstTSC uint64
	firstNs  int64

	fake *fakeClock
}

// refineEvery is how often (in clock time) TSC conversion is refined: a
// fresh anchor (a few hundred nanoseconds to take) bounds how far the
// conversion drifts from CLOCK_MONOTONIC to the rate's error over this
// span. Once a second let a 20 ms calibration's error (about 2 ppm) grow to
// hundreds of nanoseconds before the first refinement, which a receiver
// on the same host saw as frames arriving before they were sent.
const refineEvery = 10 * time.Millisecond

// NewClock returns the clock for --clock mode:
//
//   - "auto" (or ""): the TSC when this is x86-64 and the TSC is invariant
//     (CPUID leaf 0x80000007 EDX bit 8, or constant_tsc and nonstop_tsc in
//     /proc/cpuinfo) and reading it costs at most twice as much as the vDSO
//     clock (a hypervisor may trap RDTSC);
//     otherwise CLOCK_MONOTONIC, with the reason in Why;
//   - "tsc": the TSC, or an error saying why it cannot be used;
//   - "monotonic": CLOCK_MONOTONIC through the vDSO.
//
// Calibrating the TSC takes about 20 ms.
func NewClock(mode string) (*Clock, error) {
	m := strings.ToLower(strings.TrimSpace(mode))
	switch m {
	case "monotonic":
		return &Clock{kind: clockMonotonic, why: "--clock monotonic"}, nil
	case "", "auto", "tsc":
	default:
		const want = "auto (TSC when invariant, else monotonic; the default), tsc or monotonic"
		return nil, inputerr.Worded(nil, fmt.Sprintf("clock %q: want %s", mode, want), "is not a clock", "use "+want)
	}
	ok, why := tscInvariant("/proc/cpuinfo")
	if ok {
		c := &Clock{kind: clockTSC, refineNs: refineEvery.Nanoseconds()}
		c.calibrate(20 * time.Millisecond)
		if m != "tsc" {
			// A hypervisor that traps RDTSC makes it cost a microsecond or
			// more; compare the bare instruction with the vDSO clock.
			tscCost, monoCost := readCost(func() int64 { return int64(sys.Rdtsc()) }), readCost(sys.NanotimeNs)
			if tscCost > 2*monoCost {
				return &Clock{kind: clockMonotonic, why: fmt.Sprintf("auto: the TSC is invariant (%s) but reading it costs %d ns against %d ns for the vDSO clock (trapped by the hypervisor?)", why, tscCost, monoCost)}, nil
			}
			c.why = "auto: " + why
		} else {
			c.why = "--clock tsc: " + why
		}
		return c, nil
	}
	if m == "tsc" {
		return nil, inputerr.Worded(nil, fmt.Sprintf("--clock tsc: %s; use --clock auto or monotonic", why), "cannot be used here: "+why, "use auto or monotonic")
	}
	return &Clock{kind: clockMonotonic, why: "auto: " + why}, nil
}

// Now returns the time in nanoseconds on the CLOCK_MONOTONIC timescale.
func (c *Clock) Now() int64 {
	switch c.kind {
	case clockTSC:
		return c.tscNow()
	case clockMonotonic:
		return sys.NanotimeNs()
	}
	return c.fake.read()
}

// TSC reports whether the clock reads the TSC.
func (c *Clock) TSC() bool { return c.kind == clockTSC }

// Source returns "tsc" or "monotonic" ("fake" in tests).
func (c *Clock) Source() string {
	switch c.kind {
	case clockTSC:
		return "tsc"
	case clockMonotonic:
		return "monotonic"
	}
	return "fake"
}

// Why says why this source was chosen (for auto: why the TSC was or was
// not used).
func (c *Clock) Why() string { return c.why }

// TSCHz returns the calibrated TSC frequency in Hz, or 0 when the clock
// does not read the TSC.
func (c *Clock) TSCHz() float64 {
	if c.kind != clockTSC {
		return 0
	}
	return 1e9 * (1 << 32) / float64(c.params[c.cur.Load()&1].mult.Load())
}

// sleepUntil sleeps until the clock reads about t (it may wake early on a
// signal or late by the scheduler's latency).
func (c *Clock) sleepUntil(t int64) {
	if c.kind == clockFake {
		c.fake.sleepUntil(t)
		return
	}
	_ = sys.SleepUntilMonotonic(t)
}

func (c *Clock) tscNow() int64 {
	for {
		pp := &c.params[c.cur.Load()&1]
		g := pp.gen.Load()
		if g&1 != 0 {
			continue // a stale slot being rewritten: reload cur
		}
		bt, bn, m, rt := pp.baseTSC.Load(), pp.baseNs.Load(), pp.mult.Load(), pp.refineTicks.Load()
		if pp.gen.Load() != g {
			continue
		}
		t := sys.Rdtsc()
		if d := t - bt; int64(d) >= 0 {
			if d > rt {
				c.refine()
			}
			return bn + int64(mulShift32(d, m))
		}
		// another core's counter a few ticks behind the base
		return bn - int64(mulShift32(bt-t, m))
	}
}

// mulShift32 returns d·m/2³² without overflow.
func mulShift32(d, m uint64) uint64 {
	hi, lo := bits.Mul64(d, m)
	return hi<<32 | lo>>32
}

// pair reads the TSC and the monotonic clock at (nearly) the same instant:
// the monotonic read is bracketed by two TSC reads and the narrowest of a
// few tries wins.
func pair() (tsc uint64, ns int64) {
	best := ^uint64(0)
	for range 8 {
		t0 := sys.Rdtsc()
		n := sys.NanotimeNs()
		t1 := sys.Rdtsc()
		if w := t1 - t0; t1 >= t0 && w < best {
			best, tsc, ns = w, t0+w/2, n
		}
	}
	return tsc, ns
}

// calibrate measures the TSC rate over about d and publishes the conversion.
func (c *Clock) calibrate(d time.Duration) {
	t0, n0 := pair()
	time.Sleep(d)
	t1, n1 := pair()
	c.firstTSC, c.firstNs = t0, n0
	c.publish(t1, n1, ratio(n1-n0, t1-t0))
}

// ratio returns ns/ticks as a 32.32 fixed-point number.
func ratio(ns int64, ticks uint64) uint64 {
	if ns <= 0 || ticks == 0 {
		return 1 << 32
	}
	hi, lo := uint64(ns)>>32, uint64(ns)<<32
	if hi >= ticks {
		return 1 << 32
	}
	q, _ := bits.Div64(hi, lo, ticks)
	return q
}

// publish writes a conversion into the inactive slot and makes it current.
// Callers are serialised (NewClock, or refine under c.refining).
func (c *Clock) publish(bt uint64, bn int64, m uint64) {
	next := (c.cur.Load() + 1) & 1
	pp := &c.params[next]
	pp.gen.Add(1)
	pp.baseTSC.Store(bt)
	pp.baseNs.Store(bn)
	pp.mult.Store(m)
	// refine after about refineEvery of counter time
	pp.refineTicks.Store(uint64(float64(c.refineNs) * float64(1<<32) / float64(m)))
	pp.gen.Add(1)
	c.cur.Store(next)
}

// refine re-anchors the conversion at a fresh (TSC, monotonic) pair, with
// the rate measured over everything since the first calibration point. One
// caller does it; the others keep reading the previous conversion.
func (c *Clock) refine() {
	if !c.refining.CompareAndSwap(false, true) {
		return
	}
	t, n := pair()
	c.publish(t, n, ratio(n-c.firstNs, t-c.firstTSC))
	c.refining.Store(false)
}

// readCost returns the median cost in ns of one read of f.
func readCost(f func() int64) int64 {
	var best [5]int64
	for i := range best {
		const n = 2000
		s := sys.NanotimeNs()
		for range n {
			f()
		}
		best[i] = (sys.NanotimeNs() - s) / n
	}
	for i := 1; i < len(best); i++ {
		for j := i; j > 0 && best[j] < best[j-1]; j-- {
			best[j], best[j-1] = best[j-1], best[j]
		}
	}
	return best[len(best)/2]
}

// tscInvariant reports whether the TSC can serve as a clock here, and why.
func tscInvariant(cpuinfo string) (bool, string) {
	if !sys.TSCAvailable {
		return false, "no TSC on this architecture (x86-64 only)"
	}
	if max, _, _, _ := sys.CPUID(0x80000000, 0); max >= 0x80000007 {
		if _, _, _, edx := sys.CPUID(0x80000007, 0); edx&(1<<8) != 0 {
			return true, "invariant TSC (CPUID 0x80000007 EDX bit 8)"
		}
	}
	b, err := os.ReadFile(cpuinfo)
	if err != nil {
		return false, fmt.Sprintf("CPUID does not report an invariant TSC and %v", err)
	}
	f := cpuFlags(b)
	if f["constant_tsc"] && f["nonstop_tsc"] {
		return true, "constant_tsc and nonstop_tsc in " + cpuinfo
	}
	return false, fmt.Sprintf("the TSC is not invariant (CPUID 0x80000007 EDX bit 8 clear; %s lacks constant_tsc or nonstop_tsc)", cpuinfo)
}

// cpuFlags parses the first "flags" line of /proc/cpuinfo.
func cpuFlags(cpuinfo []byte) map[string]bool {
	sc := bufio.NewScanner(bytes.NewReader(cpuinfo))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.TrimSpace(k) != "flags" {
			continue
		}
		m := map[string]bool{}
		for _, f := range strings.Fields(v) {
			m[f] = true
		}
		return m
	}
	return map[string]bool{}
}

// fakeClock is the test seam: time moves only when the pacer reads it
// (by step per read) or sleeps (to the deadline plus oversleep).
type fakeClock struct {
	now       int64
	step      int64
	oversleep int64
	reads     int64
	sleeps    int64
	onSleep   func(target int64) int64 // optional: returns the wake time
}

func (f *fakeClock) read() int64 {
	f.reads++
	f.now += f.step
	return f.now
}

func (f *fakeClock) sleepUntil(t int64) {
	f.sleeps++
	if f.onSleep != nil {
		f.now = f.onSleep(t)
		return
	}
	if t > f.now {
		f.now = t
	}
	f.now += f.oversleep
}

func newFakeClock(f *fakeClock) *Clock { return &Clock{kind: clockFake, why: "test", fake: f} }
