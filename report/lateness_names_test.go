package report_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/wpg-dev/wpg/report"
)

// TestLatenessPercentileNames (issue #29): the pacer's lateness
// percentiles are lateness_p50_ns and lateness_p99_ns, as lateness_max_ns
// and the intervals' lateness_p99_ns are named; "jitter" is the
// receiver's RFC 3550 figure. The v1 names p50_jitter and p99_jitter stay
// in wpg.report/v2, deprecated, with the same values, and a report that
// has only them (v1, an older v2) reads into the new fields.
func TestLatenessPercentileNames(t *testing.T) {
	var buf bytes.Buffer
	if err := sample().WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]float64{"lateness_p50_ns": 60, "lateness_p99_ns": 4000, "p50_jitter": 60, "p99_jitter": 4000} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	var back report.Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.LatenessP50Ns != 60 || back.LatenessP99Ns != 4000 || back.Frames != sample().Frames {
		t.Errorf("read back: p50 %d p99 %d frames %d", back.LatenessP50Ns, back.LatenessP99Ns, back.Frames)
	}
	var v1 report.Report
	if err := json.Unmarshal([]byte(`{"schema":"wpg.report/v1","frames":5,"p50_jitter":70,"p99_jitter":900}`), &v1); err != nil {
		t.Fatal(err)
	}
	if v1.LatenessP50Ns != 70 || v1.LatenessP99Ns != 900 || v1.Frames != 5 {
		t.Errorf("a v1 report: p50 %d p99 %d frames %d, want 70, 900, 5", v1.LatenessP50Ns, v1.LatenessP99Ns, v1.Frames)
	}
	var both report.Report
	if err := json.Unmarshal([]byte(`{"lateness_p50_ns":1,"lateness_p99_ns":2,"p50_jitter":70,"p99_jitter":900}`), &both); err != nil {
		t.Fatal(err)
	}
	if both.LatenessP50Ns != 1 || both.LatenessP99Ns != 2 {
		t.Errorf("the new names lose to the old: p50 %d p99 %d", both.LatenessP50Ns, both.LatenessP99Ns)
	}
}
