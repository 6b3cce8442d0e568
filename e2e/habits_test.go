package e2e

import (
	"encoding/json"
	"math"
	"testing"
)

// habitReport is what the habits tests read of `wpg send --json`.
type habitReport struct {
	Frames    uint64                `json:"frames"`
	Rate      string                `json:"rate"`
	TargetPPS float64               `json:"target_pps"`
	Backend   struct{ Name string } `json:"backend"`
	Notes     []string              `json:"notes"`
}

// TestRateSpellingsCLI (issue #28): `wpg send --backend null --rate X
// --count 10` sends for the rates TRex, tc, trafgen and iperf3 users type,
// each meaning what its home tool means (docs/rate.md): frames per second
// for 1mpps, bits per second for the rest, counted at layer 2 over the
// default template's 64-byte frames.
func TestRateSpellingsCLI(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		rate, reads string
		pps         float64
	}{
		{"1mpps", "1Mpps", 1e6},
		{"10gbps", "10Gbps", 10e9 / 512},
		{"1Mbit", "1Mbps", 1e6 / 512},
		{"100mbit", "100Mbps", 100e6 / 512},
		{"10M", "10Mbps", 10e6 / 512},
		{"1Gbit/s", "1Gbps", 1e9 / 512},
	} {
		out, errs, code := run(t, dir, "send", "--backend", "null", "--rate", c.rate, "--count", "10", "--json")
		var rep habitReport
		if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
			t.Errorf("--rate %s: exit %d, %s", c.rate, code, errs)
			continue
		}
		if rep.Frames != 10 || rep.Rate != c.reads || math.Abs(rep.TargetPPS-c.pps) > 1e-9*c.pps {
			t.Errorf("--rate %s: %d frames at %q = %v pps; want 10 at %q = %v pps", c.rate, rep.Frames, rep.Rate, rep.TargetPPS, c.reads, c.pps)
		}
	}
}
