package engine_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/engine"
)

// latePacer grants its first frames only after a wait (as a pacer whose
// schedule starts late would), and the rest at once.
type latePacer struct {
	wait    time.Duration
	started bool
}

func (p *latePacer) Setup() error { return nil }
func (p *latePacer) Return(int)   {}
func (p *latePacer) Grant(max int, stop *atomic.Bool) int {
	if !p.started {
		p.started = true
		time.Sleep(p.wait)
	}
	return max
}

// Result.Lead is the time before the first frames could go (the first
// grant): a short paced run measures its frames due from there. It lies
// within the run's Seconds, and is zero for a run that sent nothing.
func TestResultLeadEndsAtTheFirstGrant(t *testing.T) {
	for _, c := range []struct {
		name  string
		count uint64
		wait  time.Duration
	}{{"first grant after 5 ms", 10, 5 * time.Millisecond}, {"nothing sent", 0, 0}} {
		reg := backend.Registration{Name: "counting", Open: func(_ context.Context, o backend.Options) (backend.Instance, error) {
			return &countingInstance{opts: o, seen: map[uint64]int{}}, nil
		}}
		cfg := engine.Config{
			Backend: reg, Workers: 1, Batch: 8, Count: c.count,
			NewSource: func(context.Context, int, int) (engine.Source, error) { return &seqSource{step: 1}, nil },
			NewPacer:  func(int) engine.Pacer { return &latePacer{wait: c.wait} },
		}
		if c.count == 0 {
			cfg.Duration = time.Millisecond
			cfg.NewPacer = func(int) engine.Pacer { return zeroPacer{} }
		}
		job, err := engine.Start(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		res := job.Wait()
		if err := res.Err(); err != nil {
			t.Fatal(err)
		}
		switch {
		case res.Frames == 0 && res.Lead != 0:
			t.Errorf("%s: no frames, lead %v s, want 0", c.name, res.Lead)
		case res.Frames > 0 && (res.Lead < c.wait.Seconds() || res.Lead > res.Seconds):
			t.Errorf("%s: lead %v s of %v, want at least the pacer's %v and within the run", c.name, res.Lead, res.Seconds, c.wait)
		}
	}
}

// zeroPacer grants nothing until the run stops.
type zeroPacer struct{}

func (zeroPacer) Setup() error { return nil }
func (zeroPacer) Return(int)   {}
func (zeroPacer) Grant(_ int, stop *atomic.Bool) int {
	for !stop.Load() {
		time.Sleep(100 * time.Microsecond)
	}
	return 0
}
