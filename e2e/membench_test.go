package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func membenchRun(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return run(t, t.TempDir(), append([]string{"membench"}, args...)...)
}

// wpg membench runs the small matrix end to end between two processes and
// every importer checksum agrees with the exporter's.
func TestMembenchSmallMatrix(t *testing.T) {
	out, errs, code := membenchRun(t, "--sizes", "4K,1M", "--iters", "2", "--min-bytes", "4M")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	for _, want := range []string{"date:", "host:", "kernel:", "CPU:", "cores:", "memory:", "in-place read:",
		"LOCAL-cpy", "SHM-cpy", "SHM-dir", "CMA-cpy", "PIPE", "warm bandwidth", "cold bandwidth", "best bandwidth", "verified: all"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat("/dev/xpmem"); err != nil && !strings.Contains(out, "XPMEM-cpy: not available: xpmem module not loaded") {
		t.Errorf("without /dev/xpmem the report must say XPMEM is not available:\n%s", out)
	}
}

func TestMembenchJSON(t *testing.T) {
	out, errs, code := membenchRun(t, "--sizes", "4K,1M", "--iters", "2", "--min-bytes", "4M", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep struct {
		Schema  string         `json:"schema"`
		System  map[string]any `json:"system"`
		Reader  string         `json:"reader"`
		Iters   int            `json:"iters"`
		Sizes   []int64        `json:"sizes"`
		Methods []struct {
			Name      string `json:"name"`
			Available bool   `json:"available"`
			Reason    string `json:"reason"`
		} `json:"methods"`
		Results []struct {
			Method     string  `json:"method"`
			Size       int64   `json:"size"`
			ColdGBps   float64 `json:"cold_gbps"`
			WarmGBps   float64 `json:"warm_gbps"`
			BestGBps   float64 `json:"best_gbps"`
			Checksum   string  `json:"checksum"`
			Checked    int64   `json:"checked"`
			Verified   bool    `json:"verified"`
			Iterations []struct {
				Ops   int64   `json:"ops"`
				Bytes int64   `json:"bytes"`
				Ns    int64   `json:"ns"`
				GBps  float64 `json:"gbps"`
			} `json:"iterations"`
		} `json:"results"`
		Verified bool `json:"verified"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Schema != "wpg.membench/v1" || rep.Iters != 2 || len(rep.Sizes) != 2 || rep.Reader == "" || !rep.Verified {
		t.Errorf("header: schema %q iters %d sizes %v reader %q verified %v", rep.Schema, rep.Iters, rep.Sizes, rep.Reader, rep.Verified)
	}
	for _, k := range []string{"date", "host", "kernel", "cpu", "cores", "memory_bytes"} {
		if _, ok := rep.System[k]; !ok {
			t.Errorf("system lacks %q", k)
		}
	}
	ran := 0
	for _, m := range rep.Methods {
		if m.Available {
			ran++
		} else if !strings.HasPrefix(m.Name, "XPMEM") {
			t.Errorf("%s not available: %s", m.Name, m.Reason)
		}
	}
	if len(rep.Results) != 2*ran {
		t.Errorf("%d results for %d available methods × 2 sizes", len(rep.Results), ran)
	}
	for _, r := range rep.Results {
		if !r.Verified || r.Checked < 2 || r.Checksum == "" || len(r.Iterations) != 2 || r.WarmGBps <= 0 || r.ColdGBps <= 0 {
			t.Errorf("%s %d: %+v", r.Method, r.Size, r)
		}
	}
}

func TestMembenchBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--sizes", "4X"},
		{"--methods", "rdma"},
		{"--iters", "0"},
	} {
		_, errs, code := membenchRun(t, args...)
		if code == 0 || !strings.Contains(errs, "wpg: ") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
}
