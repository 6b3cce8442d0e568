package server

import (
	"testing"
	"time"
)

// TestSamplesOnTheRunsSeconds: sample t holds the totals at second t of
// the run's own clock, not at the next snapshot tick after it. The
// monitor used to take samples on its 250 ms snapshot ticker, started
// before the run, so sample 1 of a 1 kpps job held the frames of about
// 1.24 s (some 1240) and said they were the first second's. A paced run
// never sends ahead of its rate, so the frames of sample t are at most
// rate × t plus the slack of a timer firing (bounded here at 15 %, a
// quarter of a second would exceed it).
func TestSamplesOnTheRunsSeconds(t *testing.T) {
	ts := newTest(t, Options{})
	v := ts.create(`{"rate": "1kpps", "duration": 2600000000}`)
	ts.wait(v.ID)
	xs, err := ts.s.store.Samples(t.Context(), v.ID)
	if err != nil || len(xs) < 3 {
		t.Fatalf("samples: %+v %v", xs, err)
	}
	for _, x := range xs[:2] {
		if limit := uint64(1150 * x.T); x.Frames > limit {
			t.Errorf("sample %d holds %d frames of a 1 kpps run: more than %d, taken after second %d", x.T, x.Frames, limit, x.T)
		}
	}
	if xs[0].T != 1 || xs[1].T != 2 {
		t.Errorf("samples numbered %d, %d: want 1, 2", xs[0].T, xs[1].T)
	}
}

func TestSampleWait(t *testing.T) {
	for _, c := range []struct {
		el   time.Duration
		t    int64
		want time.Duration
	}{
		{0, 0, time.Second},                                  // before the first frame: a second of the run
		{999 * time.Millisecond, 0, time.Millisecond},        // a timer a hair early waits the rest
		{time.Second, 0, 0},                                  // due
		{1001 * time.Millisecond, 1, 999 * time.Millisecond}, // after sample 1, sample 2 at 2 s
		{3500 * time.Millisecond, 1, -1500 * time.Millisecond},
	} {
		if got := sampleWait(c.el, c.t); got != c.want {
			t.Errorf("sampleWait(%v, %d) = %v, want %v", c.el, c.t, got, c.want)
		}
	}
}
