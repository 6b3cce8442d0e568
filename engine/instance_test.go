package engine_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/engine"
)

// countingInstance records how the engine uses a backend instance.
type countingInstance struct {
	mu      sync.Mutex
	opts    backend.Options
	workers []backend.Worker
	open    int // senders not closed yet
	closed  int // Close calls
	early   bool
	seen    map[uint64]int
	smu     sync.Mutex
}

type closeCounting struct {
	*recorder
	in *countingInstance
}

func (c *closeCounting) Close() error {
	c.in.mu.Lock()
	c.in.open--
	c.in.mu.Unlock()
	return nil
}

func (in *countingInstance) NewSender(w backend.Worker) (backend.Sender, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.workers = append(in.workers, w)
	in.open++
	r := &recorder{mu: &in.smu, seen: in.seen, bufs: make([][]byte, in.opts.Batch)}
	for i := range r.bufs {
		r.bufs[i] = make([]byte, w.MaxFrame)
	}
	return &closeCounting{recorder: r, in: in}, nil
}

func (in *countingInstance) NewReceiver() (backend.Receiver, error) {
	return nil, errors.ErrUnsupported
}

func (in *countingInstance) Close() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.closed++
	in.early = in.early || in.open != 0
	return nil
}

// The engine opens the backend once per job, asks it for one sender per
// worker (with the worker's index and the source's frame size), and closes
// it once, after every sender.
func TestInstanceOncePerJob(t *testing.T) {
	var opened []*countingInstance
	reg := backend.Registration{Name: "counting", Open: func(_ context.Context, o backend.Options) (backend.Instance, error) {
		in := &countingInstance{opts: o, seen: map[uint64]int{}}
		opened = append(opened, in)
		return in, nil
	}}
	const workers = 3
	job, err := engine.Start(context.Background(), engine.Config{
		Backend: reg, Workers: workers, Batch: 8, Count: 300,
		NewSource: func(_ context.Context, w, n int) (engine.Source, error) {
			return &seqSource{next: uint64(w), step: uint64(n)}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	res := job.Wait()
	if err := res.Err(); err != nil || res.Frames != 300 {
		t.Fatalf("run: %d frames, %v", res.Frames, err)
	}
	if len(opened) != 1 {
		t.Fatalf("Open called %d times, want once per job", len(opened))
	}
	in := opened[0]
	if in.opts.Workers != workers || in.opts.Batch != 8 {
		t.Errorf("Open got Workers %d, Batch %d; want %d, 8 (from the engine's Config)", in.opts.Workers, in.opts.Batch, workers)
	}
	idx := map[int]bool{}
	for _, w := range in.workers {
		idx[w.Index] = true
		if w.MaxFrame != 64 {
			t.Errorf("worker %d: MaxFrame %d, want the source's 64", w.Index, w.MaxFrame)
		}
	}
	if len(in.workers) != workers || len(idx) != workers {
		t.Errorf("senders for workers %v, want one each for 0..%d", in.workers, workers-1)
	}
	if in.closed != 1 || in.early {
		t.Errorf("instance closed %d times (before its senders: %v), want once after them", in.closed, in.early)
	}
}

// An instance that cannot open fails the run with the backend's error and
// no sender.
func TestInstanceOpenError(t *testing.T) {
	boom := errors.New("no such port")
	reg := backend.Registration{Name: "broken", Open: func(context.Context, backend.Options) (backend.Instance, error) { return nil, boom }}
	job, err := engine.Start(context.Background(), engine.Config{
		Backend: reg, Workers: 2, Batch: 8, Count: 10,
		NewSource: func(_ context.Context, w, n int) (engine.Source, error) { return &seqSource{step: 1}, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	res := job.Wait()
	if !errors.Is(res.Err(), boom) || res.Stop != engine.StopError || res.Frames != 0 {
		t.Fatalf("stop %q, %d frames, err %v; want stop error and the open error", res.Stop, res.Frames, res.Err())
	}
}
