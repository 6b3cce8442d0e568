package job

import (
	"context"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/examples"
)

// TestSnapshotStreams: a template run's snapshots carry each stream's
// frames, by name, while it runs (never ahead of the frames sent) and at
// its end, where they add up to the run's frames and equal
// the report's streams.
func TestSnapshotStreams(t *testing.T) {
	text, err := examples.FS.ReadFile("mixed.wpg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec := NewSpec()
	spec.TemplateText, spec.Rate, spec.Count, spec.Workers = string(text), "20kpps", 6000, 2
	run, err := Start(context.Background(), spec, Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { run.Stop(); <-run.Done() }()
	var live Snapshot
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		live = run.Snapshot()
		var sum uint64
		for _, st := range live.Streams {
			sum += st.Frames
		}
		if sum > 0 && !live.Done {
			// A worker stores its streams' counts after sending them:
			// never more than the frames sent by the next snapshot.
			if later := run.Snapshot(); sum > later.Frames {
				t.Errorf("live streams sum to %d, more than the %d frames sent", sum, later.Frames)
			}
			break
		}
		if time.Now().After(deadline) || live.Done {
			t.Fatalf("no live stream counts before the end: %+v", live.Streams)
		}
	}
	if len(live.Streams) != 6 || live.Streams[0].Name != "udp4-imix" || live.Streams[5].Name != "arp" {
		t.Errorf("live streams %+v", live.Streams)
	}
	<-run.Done()
	end := run.Snapshot()
	rep := run.Report()
	var sum uint64
	for i, st := range end.Streams {
		sum += st.Frames
		if i >= len(rep.Streams) || rep.Streams[i].Frames != st.Frames || rep.Streams[i].Name != st.Name || st.PPS <= 0 {
			t.Errorf("stream %d at the end %+v; the report's %+v", i, st, rep.Streams)
		}
	}
	if sum != end.Frames || end.Frames != 6000 {
		t.Errorf("streams sum to %d at the end, of %d frames", sum, end.Frames)
	}
}
