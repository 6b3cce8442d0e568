package server

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/wpg-dev/wpg/report"
)

// TestSnapshotLatenessNames: the last snapshot of a paced job has the
// report's lateness percentiles as lateness_p50_ns and lateness_p99_ns
// (as the report names them), and still under their deprecated names
// p50_jitter_ns and p99_jitter_ns.
func TestSnapshotLatenessNames(t *testing.T) {
	ts := newTest(t, Options{})
	v := ts.create(`{"rate": "20kpps", "count": 4000}`)
	resp, err := ts.hs.Client().Get(fmt.Sprintf("%s/api/v1/jobs/%d/events", ts.hs.URL, v.ID))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var last map[string]any
	for ev := range readEvents(t, resp.Body) {
		if ev.name == "snapshot" {
			last = nil
			if err := json.Unmarshal(ev.data, &last); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, data := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d/report", v.ID), nil)
	var rep report.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if last["done"] != true || rep.LatenessP99Ns == 0 {
		t.Fatalf("last snapshot %v; report p99 %d", last, rep.LatenessP99Ns)
	}
	for name, want := range map[string]int64{"lateness_p50_ns": rep.LatenessP50Ns, "lateness_p99_ns": rep.LatenessP99Ns, "p50_jitter_ns": rep.LatenessP50Ns, "p99_jitter_ns": rep.LatenessP99Ns} {
		if got, ok := last[name].(float64); !ok || int64(got) != want {
			t.Errorf("%s: %v, want the report's %d", name, last[name], want)
		}
	}
}
