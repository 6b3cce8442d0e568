package engine_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/engine"
)

// streamSource renders frames of three streams in turn and counts them
// per stream (engine.LiveStreamCounter); past hold frames it waits for
// gate once.
type streamSource struct {
	seqSource
	counts         [3]uint64
	rendered, hold uint64
	gate           chan struct{}
}

func (s *streamSource) Render(bufs [][]byte, lens []int, t int64) int {
	if s.gate != nil && s.rendered >= s.hold {
		<-s.gate
		s.gate = nil
	}
	n := s.seqSource.Render(bufs, lens, t)
	for range n {
		s.counts[s.rendered%3]++
		s.rendered++
	}
	return n
}

func (s *streamSource) AppendStreamFrames(dst []uint64) []uint64 { return append(dst, s.counts[:]...) }

// TestCountersStreamsLive: the workers store their sources' frames per
// stream while the run goes (here while a source waits), and at the end.
func TestCountersStreamsLive(t *testing.T) {
	seen := map[uint64]int{}
	var mu sync.Mutex
	gate := make(chan struct{})
	var clock atomic.Int64
	job, err := engine.Start(context.Background(), engine.Config{
		Backend: newRecorder(seen, &mu),
		NewSource: func(_ context.Context, w, n int) (engine.Source, error) {
			return &streamSource{seqSource: seqSource{next: uint64(w), step: uint64(n)}, hold: 300, gate: gate}, nil
		},
		// Each reading of the clock is a StreamsEvery later: every batch
		// stores its counts.
		Now:     func() int64 { return clock.Add(int64(engine.StreamsEvery)) },
		Workers: 2,
		Batch:   10,
		Count:   3000,
	})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if got := job.Counters().Streams(nil); slices.Equal(got, []uint64{200, 200, 200}) {
			break // both workers wait at 300 frames each
		}
		if time.Now().After(deadline) {
			t.Fatalf("live streams %v, want [200 200 200] while the sources wait", job.Counters().Streams(nil))
		}
		time.Sleep(time.Millisecond)
	}
	close(gate)
	res := job.Wait()
	if res.Frames != 3000 {
		t.Fatalf("frames %d", res.Frames)
	}
	if got := job.Counters().Streams(make([]uint64, 0, 8)); !slices.Equal(got, []uint64{1000, 1000, 1000}) {
		t.Errorf("streams at the end %v, want [1000 1000 1000]", got)
	}
}
