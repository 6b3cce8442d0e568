package engine_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/engine"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/pace"
	"github.com/wpg-dev/wpg/template"
)

// sigRecorder is a TimedSender that keeps, per (stream, seq) of each
// frame's signature, the time the engine stamped it with.
type sigRecorder struct {
	mu    *sync.Mutex
	seen  map[[2]uint64]int64
	bufs  [][]byte
	dupes *int
}

func (r *sigRecorder) Reserve(b [][]byte) (int, error) { return copy(b, r.bufs), nil }
func (r *sigRecorder) Commit(lens []int) (int, error) {
	return r.CommitAt(lens, make([]int64, len(lens)))
}
func (r *sigRecorder) CommitAt(lens []int, at []int64) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, n := range lens {
		sig, ok := frame.ParseSignature(r.bufs[i][:n])
		if !ok {
			continue
		}
		k := [2]uint64{uint64(sig.Stream), sig.Seq & (1<<56 - 1)}
		if _, dup := r.seen[k]; dup {
			*r.dupes++
		}
		r.seen[k] = at[i]
	}
	return len(lens), nil
}
func (r *sigRecorder) MaxFrame() int      { return 9216 }
func (r *sigRecorder) Info() backend.Info { return backend.Info{Backend: "sigrec", NUMANode: -1} }
func (r *sigRecorder) Flush() error       { return nil }
func (r *sigRecorder) Close() error       { return nil }

const timedTemplate = `
streams:
  - {name: steady, rate: 20kpps, count: 100, ipv4: {}, udp: {}}
  - {name: bursts, rate: 100kpps, delay: 1ms, burst: {frames: 8, count: 4, gap: 500us}, ipv4: {}, udp: {dst: 10}}
`

// TestTimedSourceFollowedByThePacer: with a template whose streams keep
// their own rates, each worker's pacer follows its source: every frame of
// every stream is sent once, stamped with its own due time (from the
// job's start, one schedule for both workers), and the result counts each
// stream's frames.
func TestTimedSourceFollowedByThePacer(t *testing.T) {
	spec, err := template.Parse("timed", []byte(timedTemplate))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[[2]uint64]int64{}
	dupes := 0
	reg := backend.Registration{Name: "sigrec", Open: backend.Factories{Sender: func(_ context.Context, o backend.Options) (backend.Sender, error) {
		r := &sigRecorder{mu: &mu, seen: seen, bufs: make([][]byte, o.Batch), dupes: &dupes}
		for i := range r.bufs {
			r.bufs[i] = make([]byte, 9216)
		}
		return r, nil
	}}.Open}
	var pacers []*pace.Pacer
	var pmu sync.Mutex
	res := mustRun(t, engine.Config{
		Backend: reg,
		NewSource: func(ctx context.Context, w, n int) (engine.Source, error) {
			return template.CompileContext(ctx, spec, template.CompileOptions{Worker: w, Workers: n})
		},
		NewPacer: func(int) engine.Pacer {
			p := pace.New(pace.Config{FPS: 1000})
			pmu.Lock()
			pacers = append(pacers, p)
			pmu.Unlock()
			return p
		},
		Workers: 2,
		Batch:   16,
	})
	if res.Frames != 132 || dupes != 0 {
		t.Fatalf("%d frames (%d twice), want 100 + 32", res.Frames, dupes)
	}
	if len(seen) != 132 {
		t.Fatalf("%d distinct frames", len(seen))
	}
	// The stamps are the due times, from the job's start, which both
	// workers share: consecutive frames of a stream (from the two
	// workers in turn) are its interval apart.
	for k := uint64(1); k < 100; k++ {
		if d := seen[[2]uint64{0, k}] - seen[[2]uint64{0, k - 1}]; d != 50_000 {
			t.Errorf("steady: frames %d and %d %d ns apart, want 50 µs", k-1, k, d)
		}
	}
	if d := seen[[2]uint64{1, 0}] - seen[[2]uint64{0, 0}]; d != 1_000_000 {
		t.Errorf("bursts start %d ns after steady, want its 1 ms delay", d)
	}
	for k := uint64(1); k < 32; k++ {
		want := int64(10_000) // within a burst
		if k%8 == 0 {
			want = 500_000 // the gap from the last frame of a burst
		}
		if d := seen[[2]uint64{1, k}] - seen[[2]uint64{1, k - 1}]; d != want {
			t.Errorf("bursts: frames %d and %d %d ns apart, want %d", k-1, k, d, want)
		}
	}
	var per [2]uint64
	for _, w := range res.Workers {
		for s, n := range w.StreamFrames {
			per[s] += n
		}
	}
	if per != [2]uint64{100, 32} {
		t.Errorf("StreamFrames sum %v, want [100 32]", per)
	}
	for _, p := range pacers {
		if st := p.Stats(); st.Grants == 0 || st.Frames != 66 {
			t.Errorf("pacer stats %+v: want grants and 66 frames", st)
		}
	}
}

// TestTimedSourceNeedsAPacer: a timed source without a pacer is refused
// with an error that says so, rather than sent flat out.
func TestTimedSourceNeedsAPacer(t *testing.T) {
	spec, err := template.Parse("timed", []byte(timedTemplate))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	job, err := engine.Start(context.Background(), engine.Config{
		Backend: newRecorder(map[uint64]int{}, &mu),
		NewSource: func(ctx context.Context, w, n int) (engine.Source, error) {
			return template.CompileContext(ctx, spec, template.CompileOptions{Worker: w, Workers: n})
		},
		Batch: 16,
	})
	if err != nil {
		t.Fatal(err)
	}
	res := job.Wait()
	if err := res.Err(); err == nil || !strings.Contains(err.Error(), "own schedules") || res.Frames != 0 {
		t.Fatalf("err %v, %d frames", err, res.Frames)
	}
}
