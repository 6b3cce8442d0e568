package server

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
)

// TestJobRateSpellings: a job's rate is read by --rate's parser, so the
// API takes the spellings of TRex, tc, trafgen and iperf3 (docs/rate.md)
// as the command line does, and refuses a byte rate with its reason.
func TestJobRateSpellings(t *testing.T) {
	ts := newTest(t, Options{})
	// The embedded default template's frames are 64 bytes (layer 2).
	for rate, pps := range map[string]float64{"1mpps": 1e6, "10gbps": 10e9 / 512, "100mbit": 100e6 / 512, "10M": 10e6 / 512} {
		v := ts.create(fmt.Sprintf(`{"rate": %q, "count": 10}`, rate))
		if end := ts.wait(v.ID); end.Status != StatusDone {
			t.Fatalf("rate %s: job %s: %s", rate, end.Status, end.Error)
		}
		code, data := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d/report", v.ID), nil)
		var rep struct {
			TargetPPS float64 `json:"target_pps"`
		}
		if code != http.StatusOK || json.Unmarshal(data, &rep) != nil || math.Abs(rep.TargetPPS-pps) > 1e-6*pps {
			t.Errorf("rate %s: %d, target %v pps, want %v", rate, code, rep.TargetPPS, pps)
		}
	}
	code, data := ts.do("POST", "/api/v1/jobs", `{"rate": "10MBps", "count": 10}`)
	var bad ErrorBody
	if code != http.StatusBadRequest || json.Unmarshal(data, &bad) != nil || len(bad.Errors) != 1 || bad.Errors[0].Field != "rate" || !strings.Contains(bad.Errors[0].Reason, "bytes per second") {
		t.Errorf("rate 10MBps: %d %s; want 400 naming the rate's bytes", code, data)
	}
}
