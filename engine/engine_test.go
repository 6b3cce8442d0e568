package engine_test

import (
	"context"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/engine"
)

// seqSource writes its global frame index into each frame; worker i of w
// produces indexes k ≡ i (mod w) up to limit (0 = unlimited).
type seqSource struct {
	next, step, limit uint64
}

func (s *seqSource) Render(bufs [][]byte, lens []int, _ int64) int {
	for i := range bufs {
		if s.limit > 0 && s.next >= s.limit {
			return i
		}
		binary.LittleEndian.PutUint64(bufs[i], s.next)
		lens[i] = 64
		s.next += s.step
	}
	return len(bufs)
}
func (s *seqSource) MaxFrame() int               { return 64 }
func (s *seqSource) MeanFrame() float64          { return 64 }
func (s *seqSource) Plan() (plan, detail string) { return "stream", "test" }

// recorder is a real Sender that remembers every committed frame index.
type recorder struct {
	mu   *sync.Mutex
	seen map[uint64]int
	bufs [][]byte
}

func (r *recorder) Reserve(b [][]byte) (int, error) { return copy(b, r.bufs), nil }
func (r *recorder) Commit(lens []int) (int, error) {
	r.mu.Lock()
	for i := range lens {
		r.seen[binary.LittleEndian.Uint64(r.bufs[i])]++
	}
	r.mu.Unlock()
	return len(lens), nil
}
func (r *recorder) MaxFrame() int      { return 64 }
func (r *recorder) Info() backend.Info { return backend.Info{Backend: "recorder", NUMANode: -1} }
func (r *recorder) Flush() error       { return nil }
func (r *recorder) Close() error       { return nil }

func newRecorder(seen map[uint64]int, mu *sync.Mutex) backend.Registration {
	return backend.Registration{Name: "recorder", Open: backend.Factories{Sender: func(_ context.Context, o backend.Options) (backend.Sender, error) {
		r := &recorder{mu: mu, seen: seen, bufs: make([][]byte, o.Batch)}
		for i := range r.bufs {
			r.bufs[i] = make([]byte, o.MaxFrame)
		}
		return r, nil
	}}.Open}
}

// mustRun runs cfg to its end and fails tb on an error.
func mustRun(tb testing.TB, cfg engine.Config) *engine.Result {
	tb.Helper()
	job, err := engine.Start(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	res := job.Wait()
	if err := res.Err(); err != nil {
		tb.Fatal(err)
	}
	return res
}

func TestCountSplitsExactlyAcrossWorkers(t *testing.T) {
	for _, workers := range []int{1, 2, 3} {
		seen := map[uint64]int{}
		var mu sync.Mutex
		res := mustRun(t, engine.Config{
			Backend: newRecorder(seen, &mu),
			NewSource: func(_ context.Context, w, n int) (engine.Source, error) {
				return &seqSource{next: uint64(w), step: uint64(n)}, nil
			},
			Workers: workers,
			Batch:   7,
			Count:   1000,
		})
		if res.Frames != 1000 || res.Stop != engine.StopCount {
			t.Fatalf("workers=%d: frames %d stop %s, want 1000 count", workers, res.Frames, res.Stop)
		}
		// Every global index 0..999 exactly once: the split is k ≡ i (mod w).
		for k := uint64(0); k < 1000; k++ {
			if seen[k] != 1 {
				t.Fatalf("workers=%d: index %d sent %d times", workers, k, seen[k])
			}
		}
		if res.Bytes != 64*1000 {
			t.Fatalf("bytes %d", res.Bytes)
		}
	}
}

func TestSourceEndStopsRun(t *testing.T) {
	seen := map[uint64]int{}
	var mu sync.Mutex
	job, err := engine.Start(context.Background(), engine.Config{
		Backend: newRecorder(seen, &mu),
		NewSource: func(_ context.Context, w, n int) (engine.Source, error) {
			return &seqSource{next: uint64(w), step: uint64(n), limit: 500}, nil
		},
		Workers: 2,
		Batch:   64,
	})
	if err != nil {
		t.Fatal(err)
	}
	res := job.Wait()
	if res.Frames != 500 || res.Stop != engine.StopSource {
		t.Fatalf("frames %d stop %s, want 500 source", res.Frames, res.Stop)
	}
}

func TestCancelStopsWithSignalReason(t *testing.T) {
	seen := map[uint64]int{}
	var mu sync.Mutex
	ctx, cancel := context.WithCancel(context.Background())
	job, err := engine.Start(ctx, engine.Config{
		Backend: newRecorder(seen, &mu),
		NewSource: func(_ context.Context, w, n int) (engine.Source, error) {
			return &seqSource{next: uint64(w), step: uint64(n)}, nil
		},
		Workers: 1,
		Batch:   64,
	})
	if err != nil {
		t.Fatal(err)
	}
	// Cancel once frames are flowing (the worker may not have started yet
	// when Start returns).
	for f, _ := job.Counters().Totals(); f == 0; f, _ = job.Counters().Totals() {
		time.Sleep(time.Millisecond)
	}
	cancel()
	res := job.Wait()
	if res.Stop != engine.StopSignal || res.Frames == 0 {
		t.Fatalf("stop %s frames %d, want signal and some frames", res.Stop, res.Frames)
	}
}

func TestSingleWorkerBackendRejectsTwo(t *testing.T) {
	_, err := engine.Start(context.Background(), engine.Config{
		Backend: backend.Registration{Name: "pcapfile", SingleWorker: true},
		Workers: 2, Batch: 1,
	})
	if err == nil {
		t.Fatal("want an error for two workers on a single-worker backend")
	}
}

func TestAutoCoresOrder(t *testing.T) {
	cores, err := engine.AutoCores([]int{0, 1, 2, 3}, []int{2, 3}, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{2, 3, 1, 0}
	for i := range want {
		if cores[i] != want[i] {
			t.Fatalf("got %v want %v", cores, want)
		}
	}
	if err := engine.CheckCores([]int{5}, []int{0, 1}); err == nil {
		t.Fatal("CPU 5 must be refused when only 0,1 are allowed")
	}
}

// TestCountBelowWorkersSendsExactlyCount: a worker whose share of the
// count is 0 sends nothing (its limit 0 once meant "unlimited", so
// --workers 4 --count 3 never stopped); it still appears in the result.
func TestCountBelowWorkersSendsExactlyCount(t *testing.T) {
	for _, tc := range []struct{ workers, count int }{{4, 3}, {3, 1}, {2, 1}} {
		seen := map[uint64]int{}
		var mu sync.Mutex
		job, err := engine.Start(context.Background(), engine.Config{
			Backend: newRecorder(seen, &mu),
			NewSource: func(_ context.Context, w, n int) (engine.Source, error) {
				return &seqSource{next: uint64(w), step: uint64(n)}, nil
			},
			Workers: tc.workers,
			Batch:   8,
			Count:   uint64(tc.count),
		})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-job.Done():
		case <-time.After(20 * time.Second): // a hang guard, not a timing assertion
			job.Stop(engine.StopSignal)
			<-job.Done()
			t.Fatalf("workers=%d count=%d: the run did not stop by itself", tc.workers, tc.count)
		}
		res := job.Wait()
		if err := res.Err(); err != nil {
			t.Fatal(err)
		}
		if res.Frames != uint64(tc.count) || res.Stop != engine.StopCount {
			t.Fatalf("workers=%d count=%d: frames %d stop %s, want %d count", tc.workers, tc.count, res.Frames, res.Stop, tc.count)
		}
		if len(res.Workers) != tc.workers {
			t.Fatalf("workers=%d: %d worker results, want every worker, also those that sent nothing", tc.workers, len(res.Workers))
		}
		for i, w := range res.Workers {
			want := uint64(0)
			if i < tc.count {
				want = 1
			}
			if w.Frames != want {
				t.Errorf("workers=%d count=%d: worker %d sent %d frames, want %d", tc.workers, tc.count, i, w.Frames, want)
			}
		}
		for k := uint64(0); k < uint64(tc.count); k++ {
			if seen[k] != 1 {
				t.Errorf("workers=%d count=%d: index %d sent %d times", tc.workers, tc.count, k, seen[k])
			}
		}
	}
}

// timed is a recorder that keeps the time the engine gives each frame.
type timed struct {
	recorder
	stamps *[]int64
}

func (s *timed) CommitAt(lens []int, sentNs []int64) (int, error) {
	*s.stamps = append(*s.stamps, sentNs...)
	return s.Commit(lens)
}

// schedPacer grants one burst of 4 frames per call, due every 1 µs.
type schedPacer struct{ due int64 }

func (p *schedPacer) Setup() error { return nil }
func (p *schedPacer) Grant(max int, stop *atomic.Bool) int {
	p.due += 4000
	return min(max, 4)
}
func (p *schedPacer) Return(int)                  {}
func (p *schedPacer) Due() (int64, float64, bool) { return p.due, 1000, true }

// TestTimedSenderGetsATimePerFrame: a TimedSender gets each frame's own
// time (once, every frame of a batch had the batch's): the scheduled time
// in a paced run, distinct increasing times flat out.
func TestTimedSenderGetsATimePerFrame(t *testing.T) {
	for _, paced := range []bool{true, false} {
		var stamps []int64
		var mu sync.Mutex
		reg := backend.Registration{Name: "timed", Open: backend.Factories{Sender: func(_ context.Context, o backend.Options) (backend.Sender, error) {
			r := recorder{mu: &mu, seen: map[uint64]int{}, bufs: make([][]byte, o.Batch)}
			for i := range r.bufs {
				r.bufs[i] = make([]byte, o.MaxFrame)
			}
			return &timed{recorder: r, stamps: &stamps}, nil
		}}.Open}
		var clock atomic.Int64
		cfg := engine.Config{
			Backend:   reg,
			NewSource: func(_ context.Context, w, n int) (engine.Source, error) { return &seqSource{step: 1}, nil },
			Now:       func() int64 { return clock.Add(10_000) }, // 10 µs per read
			Batch:     16,
			Count:     64,
		}
		if paced {
			cfg.NewPacer = func(int) engine.Pacer { return &schedPacer{} }
		}
		mustRun(t, cfg)
		if len(stamps) != 64 {
			t.Fatalf("paced=%v: %d stamps for 64 frames", paced, len(stamps))
		}
		for k := 1; k < len(stamps); k++ {
			if stamps[k] <= stamps[k-1] {
				t.Fatalf("paced=%v: frame %d at %d, not after frame %d at %d", paced, k, stamps[k], k-1, stamps[k-1])
			}
			if paced && stamps[k]-stamps[k-1] != 1000 && k%4 != 0 {
				t.Errorf("paced: frame %d %d ns after the one before, want its schedule's 1000", k, stamps[k]-stamps[k-1])
			}
		}
	}
}
