package job_test

import (
	"context"
	"fmt"
	"time"

	_ "github.com/wpg-dev/wpg/backend/null" // the backends a program uses register themselves
	"github.com/wpg-dev/wpg/job"
)

// A paced run on the null backend: start it, watch its snapshots, stop it
// and read the report.
func Example() {
	spec := job.NewSpec() // one worker, the default batch
	spec.Rate = "10kpps"
	spec.Duration = time.Minute
	run, err := job.Start(context.Background(), spec, job.Env{})
	if err != nil {
		fmt.Println(err) // every problem of the spec, each a *job.OptionError
		return
	}
	for {
		s := run.Snapshot() // cheap, from any goroutine
		if s.Frames >= 1000 {
			break // e.g. show s.Frames, s.PPS, s.Workers[0].Frames
		}
		time.Sleep(20 * time.Millisecond)
	}
	run.Stop()
	rep := run.Report() // waits for the run to end
	fmt.Println("backend:", rep.Backend.Backend)
	fmt.Println("stop:", rep.Stop)
	fmt.Println("rate:", rep.Rate)
	fmt.Println("snapshot agrees:", run.Snapshot().Frames == rep.Frames)
	// Output:
	// backend: null
	// stop: signal
	// rate: 10kpps
	// snapshot agrees: true
}
