package chart

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/bench"
	"github.com/wpg-dev/wpg/ndr"
	"github.com/wpg-dev/wpg/recv"
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
		LatenessMaxNs: 50_000, LatenessP50Ns: 200, LatenessP99Ns: 9_000}
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

// TestRecvPicture: a receiver's report draws its rate, its loss and its
// latency.
func TestRecvPicture(t *testing.T) {
	lost := int64(3)
	doc := map[string]any{"schema": "wpg.recv/v1", "frames": 22,
		"intervals": []report.Interval{{Start: 0, End: 1, Frames: 22, PPS: 22, Lost: &lost}},
		"latency":   map[string]any{"min_ns": 1000, "p50_ns": 2000, "p99_ns": 9000, "p999_ns": 20000, "max_ns": 90000}}
	svg := render(t, doc, "svg")
	for _, w := range []string{"wpg recv: rate", "frames lost per second", "one-way latency", "p99.9 20µs"} {
		if !strings.Contains(svg, w) {
			t.Errorf("picture lacks %q", w)
		}
	}
}

// TestIntervalPanels: the intervals of a send, recv or matrix run with a
// receiver carry loss and latency p99, and the picture has a panel for
// each (and one for a paced run's lateness); a run without a receiver has
// only its rate.
func TestIntervalPanels(t *testing.T) {
	zero, two, bad := int64(0), int64(2), uint64(1)
	none := uint64(0)
	rx := []report.Interval{
		{Start: 0, End: 1, Frames: 10, PPS: 10, Lost: &zero, Corrupted: &none},
		{Start: 1, End: 2, Frames: 12, PPS: 12, Lost: &two, Corrupted: &bad, LatencyP99Ns: 3_000_000, LatenessP99Ns: 40_000},
	}
	plain := []report.Interval{{Start: 0, End: 1, Frames: 10, PPS: 10}, {Start: 1, End: 2, Frames: 12, PPS: 12}}
	send := func(ivs []report.Interval) report.Report {
		r := report.Report{Schema: report.Schema, Command: "send", Intervals: ivs}
		r.Backend.Backend = "shm"
		return r
	}
	matrix := func(ivs []report.Interval) bench.Result {
		return bench.Result{Schema: bench.Schema, Tables: []bench.Table{{Size: 64, Rows: []bench.Row{
			{Rank: 1, Path: "shm", Group: bench.Local, PPS: 11, Runs: []bench.RunResult{{PPS: 11, Intervals: ivs}}},
			{Rank: 2, Path: "unix", Group: bench.Local, PPS: 9, Runs: []bench.RunResult{{PPS: 9, Intervals: ivs}}},
		}}}}
	}
	recvDoc := func(ivs []report.Interval) map[string]any {
		return map[string]any{"schema": "wpg.recv/v1", "frames": 22, "intervals": ivs}
	}
	panels := []string{"frames lost and corrupted per second", "one-way latency p99 per interval", "lateness p99"}
	for _, c := range []struct {
		name        string
		with, plain any
		rate        string
	}{
		{"send", send(rx), send(plain), "wpg send shm: rate"},
		{"recv", recvDoc(rx), recvDoc(plain), "wpg recv: rate"},
		{"matrix", matrix(rx), matrix(plain), "64 B frames: rate"},
	} {
		svg := render(t, c.with, "svg")
		for _, w := range append([]string{c.rate, "3ms"}, panels...) {
			if !strings.Contains(svg, w) {
				t.Errorf("%s with a receiver: picture lacks %q", c.name, w)
			}
		}
		svg = render(t, c.plain, "svg")
		if !strings.Contains(svg, c.rate) {
			t.Errorf("%s: picture lacks %q", c.name, c.rate)
		}
		for _, w := range append([]string{"lost"}, panels...) {
			if strings.Contains(svg, w) {
				t.Errorf("%s without a receiver: picture has %q", c.name, w)
			}
		}
	}
	// Loss without corruption is titled as loss alone.
	svg := render(t, send([]report.Interval{{Start: 0, End: 1, PPS: 5, Lost: &zero}}), "svg")
	if !strings.Contains(svg, "frames lost per second") || strings.Contains(svg, "corrupted") {
		t.Errorf("loss alone: the loss panel is not titled as such")
	}
}

// TestSendVerification: a send run with its own receiver draws the
// receiver's latency distribution.
func TestSendVerification(t *testing.T) {
	rep := report.Report{Schema: report.Schema, Command: "send",
		Verification: json.RawMessage(`{"schema":"wpg.recv/v1","latency":{"min_ns":5000,"p50_ns":1500000,"p99_ns":3300000,"p999_ns":11000000,"max_ns":19900000}}`)}
	rep.Backend.Backend = "shm"
	svg := render(t, rep, "svg")
	for _, w := range []string{"one-way latency", "p99.9 11ms"} {
		if !strings.Contains(svg, w) {
			t.Errorf("picture lacks %q", w)
		}
	}
}

// An RFC 2544 report draws its throughput per size, and the latency and
// back-to-back tests where they ran.
func TestNDRPlots(t *testing.T) {
	rep := ndr.Report{Schema: ndr.Schema, Sender: "a", Receiver: "b", Sizes: []ndr.SizeResult{
		{Size: 64, Result: ndr.Result{ThroughputPPS: 900_000}},
		{Size: 1518, Result: ndr.Result{ThroughputPPS: 1650},
			Latency:    &ndr.LatencyTest{Rate: 1700, Latency: &recv.Latency{MinNs: 3000, P50Ns: 25e6, P99Ns: 60e6, MaxNs: 70e6}},
			BackToBack: &ndr.BurstResult{BurstFrames: 195, Bursts: []uint64{195}}},
	}}
	b, _ := json.Marshal(rep)
	plots, err := Plots(b)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, p := range plots {
		titles = append(titles, p.Title.Text)
	}
	if len(plots) != 3 || !strings.Contains(titles[0], "throughput") || !strings.Contains(titles[1], "latency") || !strings.Contains(titles[2], "back-to-back") {
		t.Fatalf("panels %q", titles)
	}
	var svg bytes.Buffer
	if err := Render(&svg, "svg", plots); err != nil || !strings.Contains(svg.String(), "1518 B") {
		t.Fatalf("render: %v", err)
	}
	rep.Sizes[1].Latency, rep.Sizes[1].BackToBack = nil, nil
	b, _ = json.Marshal(rep)
	if plots, err := Plots(b); err != nil || len(plots) != 1 {
		t.Fatalf("throughput only: %d panels, %v", len(plots), err)
	}
}
