package cli

import (
	"encoding/json"
	"math"
	"path/filepath"
	"testing"
)

// TestOneRateLayerEverywhere (issue #29): send counted bit rates at L2
// and ndr at L1. One convention, l2 unless --rate-layer l1, and every
// report says which (bps_layer): send's intervals follow the layer too
// (they counted l2 beside an l1 report), and wpg recv has the flag and
// the field. (wpg ndr's: e2e TestNDRRateLayer.)
func TestOneRateLayerEverywhere(t *testing.T) {
	out, errs, code := wpg(t, "send", "--rate-layer", "l1", "--rate", "20kpps", "--count", "3000", "--interval", "50ms", "--json")
	if code != 0 {
		t.Fatalf("send: exit %d: %s", code, errs)
	}
	var rep struct {
		BPSLayer  string `json:"bps_layer"`
		Intervals []struct {
			Start, End    float64
			Frames, Bytes uint64
			BPS           float64
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.BPSLayer != "l1" || len(rep.Intervals) == 0 {
		t.Fatalf("send report: layer %q, %d intervals (%v)", rep.BPSLayer, len(rep.Intervals), err)
	}
	for i, in := range rep.Intervals {
		if dt := in.End - in.Start; dt > 0 {
			if want := float64(in.Bytes+24*in.Frames) * 8 / dt; math.Abs(in.BPS-want) > 1e-6*want {
				t.Errorf("interval %d: bps %v, want %v at l1", i, in.BPS, want)
			}
		}
	}
	for _, layer := range []string{"", "l1"} {
		args := []string{"recv", "--backend", "shm", "--listen", filepath.Join(t.TempDir(), "rx.sock"), "--duration", "50ms", "--json"}
		if layer != "" {
			args = append(args, "--rate-layer", layer)
		}
		out, errs, code := wpg(t, args...)
		var res struct {
			BPSLayer *string `json:"bps_layer"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || res.BPSLayer == nil || *res.BPSLayer != map[string]string{"": "l2", "l1": "l1"}[layer] {
			t.Errorf("recv --rate-layer %q: exit %d, bps_layer %v (%v) %s", layer, code, res.BPSLayer, err, errs)
		}
	}
	checkUsage(t, []usageCase{{"recv bad layer", []string{"recv", "-i", "lo", "--rate-layer", "l3"}, []string{"--rate-layer", "l3", "l1"}}})
}
