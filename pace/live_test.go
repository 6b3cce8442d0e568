package pace

import (
	"sync/atomic"
	"testing"
)

// A reader on another goroutine sees a running pacer's lateness within
// about 50 ms of pacer time, and every grant once the worker has stopped;
// nothing is counted twice.
func TestCollectWhileRunning(t *testing.T) {
	f := &fakeClock{step: 1000}
	p := New(Config{FPS: 1000, Wait: Spin, Clock: newFakeClock(f)}) // a grant per ms
	var stop atomic.Bool
	got := LatenessHist()
	p.Collect(got, false)
	if got.Count() != 0 {
		t.Fatalf("before any grant: %d values", got.Count())
	}
	for range 200 { // 200 ms of pacer time
		p.Grant(1, &stop)
	}
	p.Collect(got, false)
	if n := got.Count(); n < 140 || n > 200 {
		t.Fatalf("after 200 grants a reader sees %d, want the grants up to the last hand-over (≥ 140)", n)
	}
	p.Collect(got, false) // nothing new handed over yet
	before := got.Count()
	for range 200 {
		p.Grant(1, &stop)
	}
	p.Collect(got, false)
	if got.Count() <= before {
		t.Fatalf("the second 200 grants were never handed over (%d, then %d)", before, got.Count())
	}
	p.Collect(got, true) // the worker stopped: the rest
	if n, want := got.Count(), p.Stats().Grants; n != want {
		t.Fatalf("after the worker stopped the reader has %d grants, the pacer counted %d", n, want)
	}
	p.Collect(got, true)
	if n, want := got.Count(), p.Stats().Grants; n != want {
		t.Fatalf("a second final Collect counted again: %d, want %d", n, want)
	}
}

// A pacer whose reader never collects keeps recording without waiting,
// and hands everything over when one finally does.
func TestCollectLateReader(t *testing.T) {
	f := &fakeClock{step: 1000}
	p := New(Config{FPS: 1000, Wait: Spin, Clock: newFakeClock(f)})
	var stop atomic.Bool
	got := LatenessHist()
	for range 1000 {
		p.Grant(1, &stop)
	}
	p.Collect(got, false)
	p.Collect(got, false)
	p.Collect(got, true)
	if n, want := got.Count(), p.Stats().Grants; n != want {
		t.Fatalf("reader has %d grants, want %d", n, want)
	}
}

// The hand-over keeps Grant free of allocations.
func TestGrantAllocsWithReader(t *testing.T) {
	f := &fakeClock{step: 1000}
	p := New(Config{FPS: 1e6, Burst: 1, Wait: Spin, Clock: newFakeClock(f)})
	var stop atomic.Bool
	got := LatenessHist()
	n := testing.AllocsPerRun(100_000, func() {
		p.Grant(64, &stop)
		if f.now%(10_000_000) < 1000 {
			p.Collect(got, false)
		}
	})
	if n != 0 {
		t.Fatalf("Grant with a live reader allocates %.2f times per call", n)
	}
}
