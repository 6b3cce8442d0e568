package job

import (
	"math"
	"testing"

	"github.com/wpg-dev/wpg/engine"
)

// A --count run's frames are due from its first grant, not from the
// run's start: the threads waking and the pacer's first clock read come
// before any frame could go. 2 frames at 1 kpps took 1.138 ms of run, the
// first granted 0.138 ms in, and read "achieved 87.87 %"; a long run's
// figure barely moves.
func TestPacedAchievedCountsFromTheFirstGrant(t *testing.T) {
	for _, c := range []struct {
		name          string
		frames        uint64
		seconds, lead float64
		target, want  float64
	}{
		{"2 frames at 1 kpps", 2, 0.001138, 0.000138, 1e3, 1},
		{"2 frames at 1 kpps, the second 10 µs late", 2, 0.001148, 0.000138, 1e3, 1 / 1.01},
		{"100000 frames at 100 kpps", 100000, 0.99999 + 0.000138, 0.000138, 1e5, 1},
		{"no lead", 101, 0.001, 0, 1e5, 1},
	} {
		res := &engine.Result{Frames: c.frames, Seconds: c.seconds, Lead: c.lead, Stop: engine.StopCount, Workers: make([]engine.WorkerResult, 1)}
		if got := pacedAchieved(res, c.target, 0); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: achieved %.6f, want %.6f", c.name, got, c.want)
		}
	}
	// The old reading counted the lead.
	res := &engine.Result{Frames: 2, Seconds: 0.001138, Stop: engine.StopCount, Workers: make([]engine.WorkerResult, 1)}
	if got := pacedAchieved(res, 1e3, 0); math.Abs(got-1/1.138) > 1e-9 {
		t.Errorf("without a lead: %.6f, want %.6f", got, 1/1.138)
	}
}
