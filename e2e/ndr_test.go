package e2e

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// Issue #15 item 5: wpg ndr on a veth pair of its own finds a throughput
// per size, each with its trials, and leaves no namespace behind.
func TestNDROnOwnVeth(t *testing.T) {
	testbed.RequireRoot(t)
	testbed.RequireTool(t, "ip", "iproute2")
	out, stderr, code := run(t, t.TempDir(), "ndr", "--sizes", "64,512", "--trial", "400ms", "--warmup", "200ms",
		"--resolution", "20%", "--max-rate", "400kpps", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Schema    string `json:"schema"`
		Namespace string `json:"namespace"`
		Sizes     []struct {
			Size       int     `json:"size"`
			Frame      int     `json:"frame_bytes"`
			Throughput float64 `json:"throughput_pps"`
			Trials     []struct {
				Rate     float64 `json:"rate_pps"`
				Sent     uint64  `json:"sent"`
				Received uint64  `json:"received"`
				Pass     bool    `json:"pass"`
				Warmup   bool    `json:"warmup"`
			} `json:"trials"`
		} `json:"sizes"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Schema != "wpg.ndr/1" || len(rep.Sizes) != 2 || rep.Namespace == "" {
		t.Fatalf("report: %+v", rep)
	}
	for _, s := range rep.Sizes {
		if s.Frame != s.Size-4 || s.Throughput <= 0 || len(s.Trials) < 2 || !s.Trials[0].Warmup {
			t.Errorf("size %d: frame %d, throughput %v, %d trials", s.Size, s.Frame, s.Throughput, len(s.Trials))
		}
		for _, tr := range s.Trials {
			if tr.Sent == 0 || tr.Received > tr.Sent || tr.Pass != (tr.Received == tr.Sent) {
				t.Errorf("size %d: trial %+v", s.Size, tr)
			}
		}
	}
	ns, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(ns), rep.Namespace) {
		t.Fatalf("namespace %s left behind:\n%s", rep.Namespace, ns)
	}
}

func TestNDRBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"ndr", "-i", "lo"},
		{"ndr", "--sizes", "32"},
		{"ndr", "--loss", "-1"},
		{"ndr", "--max-rate", "max"},
		{"ndr", "--trial", "0s"},
	} {
		_, stderr, code := run(t, t.TempDir(), args...)
		if code != 2 || !strings.Contains(stderr, "flag") {
			t.Errorf("%v: exit %d, %q; want 2 naming the flag", args, code, stderr)
		}
	}
}
