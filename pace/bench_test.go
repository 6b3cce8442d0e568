package pace

import (
	"sync/atomic"
	"testing"

	"github.com/wpg-dev/wpg/internal/sys"
)

var sink int64

func benchNow(b *testing.B, mode string) {
	c, err := NewClock(mode)
	if err != nil {
		b.Skipf("clock %s: %v", mode, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		sink += c.Now()
	}
}

// BenchmarkNowTSC is one Clock.Now read from the TSC (x86-64).
func BenchmarkNowTSC(b *testing.B) { benchNow(b, "tsc") }

// BenchmarkNowMonotonic is one Clock.Now read through the vDSO.
func BenchmarkNowMonotonic(b *testing.B) { benchNow(b, "monotonic") }

// BenchmarkMonotonicSyscall is sys.MonotonicNs, a clock_gettime system
// call, for comparison.
func BenchmarkMonotonicSyscall(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sink += sys.MonotonicNs()
	}
}

// BenchmarkGrantLogic is the cost of Grant's own bookkeeping (schedule,
// histogram) with a fake clock that is always on time.
func BenchmarkGrantLogic(b *testing.B) {
	f := &fakeClock{step: 1000}
	p := New(Config{FPS: 1e6, Burst: 1, Wait: Spin, Clock: newFakeClock(f)})
	var stop atomic.Bool
	b.ReportAllocs()
	for b.Loop() {
		sink += int64(p.Grant(64, &stop))
	}
}

// BenchmarkGrantBehindTSC is a real-clock Grant that never waits (the rate
// is far above what the loop can do, so every grant releases the batch):
// the per-batch overhead of pacing on the hot path.
func BenchmarkGrantBehindTSC(b *testing.B) {
	c, err := NewClock("auto")
	if err != nil {
		b.Fatal(err)
	}
	p := New(Config{FPS: 1e12, Wait: Spin, Clock: c})
	var stop atomic.Bool
	b.ReportAllocs()
	for b.Loop() {
		sink += int64(p.Grant(64, &stop))
	}
}
