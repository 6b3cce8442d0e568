package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/engine"
)

// slowClose is a recorder whose Close takes a while, as an AF_PACKET
// sender's does (unmapping its TX ring); it notes when Close began.
type slowClose struct {
	*recorder
	mu      *sync.Mutex
	closing *[]time.Time
}

const closeTakes = 300 * time.Millisecond

// thousandFrames is a run of 1000 frames of seqSource through reg.
func thousandFrames(reg backend.Registration, workers int) engine.Config {
	return engine.Config{
		Backend: reg,
		NewSource: func(_ context.Context, w, n int) (engine.Source, error) {
			return &seqSource{next: uint64(w), step: uint64(n)}, nil
		},
		Workers: workers,
		Batch:   16,
		Count:   1000,
	}
}

// slowCloser is a backend of slowClose senders recording into seen, and
// when each began to close into closing.
func slowCloser(mu *sync.Mutex, seen map[uint64]int, closing *[]time.Time) backend.Registration {
	return backend.Registration{Name: "slowclose", Open: backend.Factories{Sender: func(_ context.Context, o backend.Options) (backend.Sender, error) {
		r := &recorder{mu: mu, seen: seen, bufs: make([][]byte, o.Batch)}
		for i := range r.bufs {
			r.bufs[i] = make([]byte, o.MaxFrame)
		}
		return &slowClose{recorder: r, mu: mu, closing: closing}, nil
	}}.Open}
}

func (s *slowClose) Close() error {
	s.mu.Lock()
	*s.closing = append(*s.closing, time.Now())
	s.mu.Unlock()
	time.Sleep(closeTakes)
	return nil
}

// The run's Seconds (the report's rate is Frames / Seconds) ends when
// the last worker's frames were flushed, not after the senders were torn
// down: a 10,000-frame run at 10 kpps on afpacket reported 1.014 s and
// 98.6 % of its rate for 1.000 s of sending. The check is one of order,
// not of speed: the run cannot have lasted longer than from before Start
// to the moment the last sender began to close.
func TestSecondsEndBeforeSendersClose(t *testing.T) {
	for _, workers := range []int{1, 2} {
		var mu sync.Mutex
		var closing []time.Time
		seen := map[uint64]int{}
		reg := slowCloser(&mu, seen, &closing)
		before := time.Now()
		res := mustRun(t, thousandFrames(reg, workers))
		if res.Frames != 1000 || len(closing) != workers {
			t.Fatalf("workers=%d: frames %d, %d closes", workers, res.Frames, len(closing))
		}
		last := closing[0] // each worker closes its sender after its own flush
		for _, c := range closing[1:] {
			if c.After(last) {
				last = c
			}
		}
		if limit := last.Sub(before).Seconds(); res.Seconds > limit {
			t.Errorf("workers=%d: Seconds %.3f includes the senders' Close (the last began %.3f s after Start)", workers, res.Seconds, limit)
		}
		for _, w := range res.Workers {
			if w.Seconds > res.Seconds {
				t.Errorf("workers=%d: worker %d took %.3f s, longer than the run's %.3f", workers, w.Worker, w.Seconds, res.Seconds)
			}
		}
	}
}

// TestElapsedStopsAtTheEnd (issue #29): Elapsed, the clock of a run's
// samples and intervals, stops when the last worker's frames were
// flushed, at the run's Seconds: it ran on through the senders' teardown
// (300 ms here) and the report, and a sample taken then closed an
// interval with no frames, drawn as a drop to zero at a run's end.
func TestElapsedStopsAtTheEnd(t *testing.T) {
	var mu sync.Mutex
	var closing []time.Time
	reg := slowCloser(&mu, map[uint64]int{}, &closing)
	for _, workers := range []int{1, 2} {
		job, err := engine.Start(context.Background(), thousandFrames(reg, workers))
		if err != nil {
			t.Fatal(err)
		}
		// While the senders close, the run has ended: its clock stands.
		for {
			mu.Lock()
			n := len(closing)
			mu.Unlock()
			if n == workers {
				break
			}
			time.Sleep(time.Millisecond)
		}
		during := job.Elapsed()
		res := job.Wait()
		time.Sleep(10 * time.Millisecond)
		after := job.Elapsed()
		if want := time.Duration(res.Seconds * float64(time.Second)); during != after || (after-want).Abs() > time.Microsecond {
			t.Errorf("workers=%d: Elapsed %v while the senders closed, %v after the run; the run's Seconds %v", workers, during, after, want)
		}
		closing = nil
	}
}
