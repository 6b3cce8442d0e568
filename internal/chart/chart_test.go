package chart

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/bench"
	"github.com/wpg-dev/wpg/report"
)

func render(t *testing.T, doc any, format string) string {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	plots, err := Plots(b)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Render(&buf, format, plots); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestMatrixRanking: a matrix report draws one ranking per size, naming
// every path with its ratio.
func TestMatrixRanking(t *testing.T) {
	res := bench.Result{Schema: bench.Schema, Tables: []bench.Table{
		{Size: 64, Rows: []bench.Row{
			{Rank: 1, Path: "memcpy", Group: bench.Reference, PPS: 3e7, MinPPS: 2.9e7, MaxPPS: 3.1e7, Runs: make([]bench.RunResult, 3)},
			{Rank: 2, Path: "shm", Group: bench.Local, PPS: 1e7, Ratio: 0.33, Reference: "memcpy", Runs: make([]bench.RunResult, 3)},
		}},
		{Size: 1 << 20, Rows: []bench.Row{{Rank: 1, Path: "unix", Group: bench.Local, PPS: 3000, Ratio: 0.2, Reference: "memcpy"}}},
	}}
	svg := render(t, res, "svg")
	for _, w := range []string{"<svg", "64 B frames", "1 MiB frames", "shm (0.33× memcpy)", "memcpy (reference)", "unix (0.20× memcpy)"} {
		if !strings.Contains(svg, w) {
			t.Errorf("picture lacks %q", w)
		}
	}
	if png := render(t, res, "png"); !strings.HasPrefix(png, "\x89PNG") {
		t.Errorf("not a PNG: %q", png[:min(8, len(png))])
	}
}

// TestRunPicture: a run with intervals and lateness draws both; one
// without either says which flag gives them.
func TestRunPicture(t *testing.T) {
	rep := report.Report{Schema: report.Schema, Command: "send", Intervals: []report.Interval{{Start: 0, End: 1, Frames: 10, PPS: 10}, {Start: 1, End: 2, Frames: 12, PPS: 12}},
		LatenessMaxNs: 50_000, P50JitterNs: 200, P99JitterNs: 9_000}
	rep.Backend.Backend = "null"
	svg := render(t, rep, "svg")
	for _, w := range []string{"wpg send null: rate", "lateness", "p99 9µs"} {
		if !strings.Contains(svg, w) {
			t.Errorf("picture lacks %q", w)
		}
	}
	b, _ := json.Marshal(report.Report{Schema: report.Schema, Command: "bench"})
	if _, err := Plots(b); err == nil || !strings.Contains(err.Error(), "--interval") {
		t.Errorf("a report with nothing to draw: %v", err)
	}
	for _, bad := range []string{`{"schema":"other/v1"}`, `{}`, `not json`} {
		if _, err := Plots([]byte(bad)); err == nil {
			t.Errorf("%s: drawn", bad)
		}
	}
	if err := Render(&bytes.Buffer{}, "gif", nil); err == nil || !strings.Contains(err.Error(), ".svg or .png") {
		t.Errorf("gif: %v", err)
	}
}

// TestRecvPicture: a receiver's report draws rate and loss, and latency.
func TestRecvPicture(t *testing.T) {
	lost := int64(3)
	doc := map[string]any{"schema": "wpg.recv/v1", "frames": 22,
		"intervals": []report.Interval{{Start: 0, End: 1, Frames: 22, PPS: 22, Lost: &lost}},
		"latency":   map[string]any{"min_ns": 1000, "p50_ns": 2000, "p99_ns": 9000, "p999_ns": 20000, "max_ns": 90000}}
	svg := render(t, doc, "svg")
	for _, w := range []string{"rate and loss", "lost/s", "one-way latency", "p99.9 20µs"} {
		if !strings.Contains(svg, w) {
			t.Errorf("picture lacks %q", w)
		}
	}
}
