package engine_test

import (
	"context"
	"sync"
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/engine"
)

// keepSource records whether the engine called KeepFrames.
type keepSource struct {
	seqSource
	kept bool
}

func (s *keepSource) KeepFrames() { s.kept = true }

// keeper is a recorder that says its buffers keep their contents.
type keeper struct {
	recorder
	keeps bool
}

func (k *keeper) KeepsBuffers() bool { return k.keeps }

// TestKeepFramesOnlyWithABufferKeeper: the engine tells the source its
// buffers keep their contents only when the backend says so.
func TestKeepFramesOnlyWithABufferKeeper(t *testing.T) {
	for _, tc := range []struct {
		name        string
		keeper      bool
		keeps, want bool
	}{
		{"plain sender", false, false, false},
		{"keeper that keeps", true, true, true},
		{"keeper that does not", true, false, false},
	} {
		var mu sync.Mutex
		seen := map[uint64]int{}
		reg := backend.Registration{Name: "keeper", Open: backend.Factories{Sender: func(_ context.Context, o backend.Options) (backend.Sender, error) {
			r := recorder{mu: &mu, seen: seen, bufs: make([][]byte, o.Batch)}
			for i := range r.bufs {
				r.bufs[i] = make([]byte, o.MaxFrame)
			}
			if tc.keeper {
				return &keeper{recorder: r, keeps: tc.keeps}, nil
			}
			return &r, nil
		}}.Open}
		src := &keepSource{seqSource: seqSource{step: 1, limit: 100}}
		res := mustRun(t, engine.Config{
			Backend:   reg,
			NewSource: func(context.Context, int, int) (engine.Source, error) { return src, nil },
			Batch:     8,
		})
		if res.Frames != 100 {
			t.Fatalf("%s: %d frames, want 100", tc.name, res.Frames)
		}
		if src.kept != tc.want {
			t.Errorf("%s: KeepFrames called %v, want %v", tc.name, src.kept, tc.want)
		}
	}
}
