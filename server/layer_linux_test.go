package server

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestSamplesCountBitsAtTheJobsLayer: a job's samples count bit rates at
// its rate_layer, as its report does (bps_layer): a 64-byte frame is 512
// bits at L2 and 704 at L1 (24 bytes of preamble and gap more). They
// counted L2 beside an L1 report.
func TestSamplesCountBitsAtTheJobsLayer(t *testing.T) {
	ts := newTest(t, Options{})
	for layer, bits := range map[string]float64{"l2": 512, "l1": 704} {
		v := ts.create(`{"rate": "20kpps", "count": 30000, "rate_layer": "` + layer + `"}`)
		ts.wait(v.ID)
		xs, err := ts.s.store.Samples(t.Context(), v.ID)
		if err != nil || len(xs) == 0 {
			t.Fatalf("%s: samples %v %v", layer, xs, err)
		}
		for _, x := range xs {
			if x.PPS > 0 && math.Abs(x.BPS/x.PPS-bits) > 1e-6 {
				t.Errorf("%s: sample %d: %.0f bit/s at %.0f frames/s: %.3f bits a frame, want %.0f", layer, x.T, x.BPS, x.PPS, x.BPS/x.PPS, bits)
			}
		}
		_, page := ts.page("GET", fmt.Sprintf("/jobs/%d", v.ID), nil, nil)
		if !strings.Contains(page, `"bps_layer":"`+layer+`"`) {
			t.Errorf("%s: the page's chart data does not say the layer", layer)
		}
	}
}
