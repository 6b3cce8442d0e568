package engine_test

import (
	"context"
	"encoding/binary"
	"sync"
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
	return backend.Registration{Name: "recorder", NewSender: func(_ context.Context, o backend.Options) (backend.Sender, error) {
		r := &recorder{mu: mu, seen: seen, bufs: make([][]byte, o.Batch)}
		for i := range r.bufs {
			r.bufs[i] = make([]byte, o.MaxFrame)
		}
		return r, nil
	}}
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
			Backend:   newRecorder(seen, &mu),
			NewSource: func(w, n int) (engine.Source, error) { return &seqSource{next: uint64(w), step: uint64(n)}, nil },
			Workers:   workers,
			Batch:     7,
			Count:     1000,
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
		NewSource: func(w, n int) (engine.Source, error) {
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
		Backend:   newRecorder(seen, &mu),
		NewSource: func(w, n int) (engine.Source, error) { return &seqSource{next: uint64(w), step: uint64(n)}, nil },
		Workers:   1,
		Batch:     64,
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
