package job

import (
	"context"
	"testing"
	"time"
)

// TestSnapshotsShareReadOnlyHistograms: snapshots taken while no grant
// came in share one copy of the lateness histogram (no 200 KiB copy per
// reader), a later one gets a new copy, and the shared copy an earlier
// snapshot holds never changes under it: its figures stay those it was
// taken with, and the window between two is their difference.
func TestSnapshotsShareReadOnlyHistograms(t *testing.T) {
	spec := NewSpec()
	spec.Rate, spec.Duration = "20kpps", 10*time.Second
	run, err := Start(context.Background(), spec, Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { run.Stop(); <-run.Done() }()
	var a Snapshot
	for deadline := time.Now().Add(5 * time.Second); a.Lateness.Count == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no lateness after 5 s")
		}
		a = run.Snapshot()
	}
	// Back to back, within one 50 ms handover: the same copy, or a newer
	// one when a handover fell between them.
	b := run.Snapshot()
	if b.lat != a.lat && b.Lateness.Count == a.Lateness.Count {
		t.Errorf("two snapshots of the same counts hold two copies")
	}
	if b.lat == a.lat && b.LatenessSince(a) != (LatenessStats{}) {
		t.Errorf("window between snapshots sharing a copy: %+v, want none", b.LatenessSince(a))
	}
	time.Sleep(200 * time.Millisecond) // four handovers
	c := run.Snapshot()
	if c.lat == a.lat || c.Lateness.Count <= a.Lateness.Count {
		t.Fatalf("after 200 ms of grants: count %d, then %d, same copy %v", a.Lateness.Count, c.Lateness.Count, c.lat == a.lat)
	}
	if got := latenessOf(a.lat); got != a.Lateness {
		t.Errorf("the earlier snapshot's histogram changed under it: %+v, taken as %+v", got, a.Lateness)
	}
	if w := c.LatenessSince(a); w.Count != c.Lateness.Count-a.Lateness.Count {
		t.Errorf("window count %d, want %d − %d", w.Count, c.Lateness.Count, a.Lateness.Count)
	}
	if all := c.LatenessSince(Snapshot{}); all != c.Lateness {
		t.Errorf("since the start %+v, want the cumulative %+v", all, c.Lateness)
	}
}
