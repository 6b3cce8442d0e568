package job_test

import (
	"context"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/job"
)

// A paced run's snapshots carry its lateness while it runs, not only at
// the end: the count grows between snapshots, a window between two is
// their difference, and once done the count is every grant.
func TestSnapshotLatenessLive(t *testing.T) {
	spec := job.NewSpec()
	spec.Rate, spec.Duration = "20kpps", 1200*time.Millisecond
	run, err := job.Start(context.Background(), spec, testEnv())
	if err != nil {
		t.Fatal(err)
	}
	var snaps []job.Snapshot
	tick := time.NewTicker(150 * time.Millisecond)
	defer tick.Stop()
	for len(snaps) < 5 {
		select {
		case <-run.Done():
			t.Fatalf("the run ended after %d snapshots", len(snaps))
		case <-tick.C:
			snaps = append(snaps, run.Snapshot())
		}
	}
	<-run.Done()
	end := run.Snapshot()
	if !end.Done {
		t.Fatal("snapshot after Done is not Done")
	}
	first, last := snaps[0], snaps[len(snaps)-1]
	if last.Lateness.Count <= first.Lateness.Count || first.Lateness.Count == 0 && last.Lateness.Count == 0 {
		t.Fatalf("lateness count did not grow while the run went: %d, then %d", first.Lateness.Count, last.Lateness.Count)
	}
	w := last.LatenessSince(first)
	if w.Count != last.Lateness.Count-first.Lateness.Count {
		t.Fatalf("window count %d, want %d − %d", w.Count, last.Lateness.Count, first.Lateness.Count)
	}
	if w.P99Ns < w.P50Ns || w.MaxNs < w.P99Ns {
		t.Fatalf("window percentiles out of order: %+v", w)
	}
	if all := end.LatenessSince(job.Snapshot{}); all != end.Lateness {
		t.Fatalf("since the start %+v, want the cumulative %+v", all, end.Lateness)
	}
	if end.Lateness.Count < last.Lateness.Count {
		t.Fatalf("final count %d below a running one %d", end.Lateness.Count, last.Lateness.Count)
	}
	// Every grant of the run is in the final figure: each grant releases
	// at least one frame, so there are at most as many as frames.
	if rep := run.Report(); end.Lateness.Count == 0 || uint64(end.Lateness.Count) > rep.Frames {
		t.Fatalf("final lateness count %d for %d frames", end.Lateness.Count, rep.Frames)
	}
}

// A flat-out run has no lateness at any time.
func TestSnapshotLatenessFlatOut(t *testing.T) {
	spec := job.NewSpec()
	spec.Count = 100_000
	run, err := job.Start(context.Background(), spec, testEnv())
	if err != nil {
		t.Fatal(err)
	}
	mid := run.Snapshot()
	<-run.Done()
	end := run.Snapshot()
	if mid.Lateness != (job.LatenessStats{}) || end.Lateness != (job.LatenessStats{}) || end.LatenessSince(mid) != (job.LatenessStats{}) {
		t.Fatalf("flat-out lateness %+v / %+v", mid.Lateness, end.Lateness)
	}
}
