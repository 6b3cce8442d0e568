//go:build linux

package job_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/recv"
)

// A run with its own shm receiver shows the receiver's counts while it
// runs (the receiver's progress messages over the control connection):
// they grow between snapshots, and once done they are the report's
// verification, latency included.
func TestSnapshotReceiverLive(t *testing.T) {
	spec := job.NewSpec()
	spec.Backend, spec.Size, spec.StartReceiver = "shm", "1KiB", true
	spec.Rate, spec.Duration = "20kpps", 1500*time.Millisecond
	run, err := job.Start(context.Background(), spec, testEnv())
	if err != nil {
		t.Fatal(err)
	}
	var seen []job.Snapshot
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
watch:
	for {
		select {
		case <-run.Done():
			break watch
		case <-tick.C:
			if s := run.Snapshot(); s.Receiver != nil && !s.Done {
				seen = append(seen, s)
			}
		}
	}
	end := run.Snapshot()
	rep := run.Report()
	if rep == nil || rep.Failed != nil {
		t.Fatalf("report %+v", rep)
	}
	if len(seen) < 2 {
		t.Fatalf("%d running snapshots with receiver counts; want them while the run goes", len(seen))
	}
	first, last := seen[0].Receiver, seen[len(seen)-1].Receiver
	if last.Frames <= first.Frames || first.Final || last.Receivers != 1 {
		t.Fatalf("receiver counts did not grow while running: %+v, then %+v", first, last)
	}
	if last.Frames > rep.Frames {
		t.Fatalf("the receiver counted %d frames while running, more than the %d sent in all", last.Frames, rep.Frames)
	}
	if last.Latency.Count == 0 || last.Latency.P99Ns < last.Latency.P50Ns {
		t.Fatalf("live latency %+v; the shm receiver measures one-way latency", last.Latency)
	}
	if w := seen[len(seen)-1].ReceiverLatencySince(seen[0]); w.Count != last.Latency.Count-first.Latency.Count {
		t.Fatalf("latency window of %d, want %d − %d", w.Count, last.Latency.Count, first.Latency.Count)
	}
	var v recv.Result
	if err := json.Unmarshal(rep.Verification, &v); err != nil {
		t.Fatal(err)
	}
	r := end.Receiver
	if r == nil || !r.Final || r.Frames != v.Frames || r.Lost != v.Lost || r.Frames != rep.Frames {
		t.Fatalf("final receiver snapshot %+v; the report's verification has %d frames, %d lost (sent %d)", r, v.Frames, v.Lost, rep.Frames)
	}
	if v.Latency == nil || r.Latency.P99Ns != v.Latency.P99Ns {
		t.Fatalf("final latency %+v; the report's %+v", r.Latency, v.Latency)
	}
}

// A run without a receiver of its own has no receiver counts.
func TestSnapshotReceiverNone(t *testing.T) {
	spec := job.NewSpec()
	spec.Count = 1000
	run, err := job.Start(context.Background(), spec, testEnv())
	if err != nil {
		t.Fatal(err)
	}
	<-run.Done()
	if s := run.Snapshot(); s.Receiver != nil || s.ReceiverLatencySince(job.Snapshot{}) != (job.LatenessStats{}) {
		t.Fatalf("null run: receiver %+v", s.Receiver)
	}
}
