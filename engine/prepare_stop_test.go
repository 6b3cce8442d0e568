package engine_test

import (
	"context"
	"sync"
	"testing"

	"github.com/wpg-dev/wpg/engine"
)

// TestStopWhileBuildingSources: a stop (SIGTERM: the run's context
// cancelled) while the workers still build their sources (a long
// prerender) ends the run with stop "signal", no error and no frame, as
// soon as NewSource returns the context's error.
func TestStopWhileBuildingSources(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var building sync.WaitGroup
	const workers = 2
	building.Add(workers)
	var mu sync.Mutex
	job, err := engine.Start(ctx, engine.Config{
		Backend: newRecorder(map[uint64]int{}, &mu),
		NewSource: func(ctx context.Context, w, n int) (engine.Source, error) {
			building.Done()
			<-ctx.Done() // prerendering until stopped
			return nil, ctx.Err()
		},
		Workers: workers,
		Batch:   8,
	})
	if err != nil {
		t.Fatal(err)
	}
	building.Wait()
	cancel()
	res := job.Wait()
	if res.Stop != engine.StopSignal || res.Err() != nil || res.Frames != 0 {
		t.Fatalf("stop %q, error %v, %d frames; want signal, none, 0", res.Stop, res.Err(), res.Frames)
	}
}
