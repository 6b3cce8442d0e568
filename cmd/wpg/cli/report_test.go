package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/hist"
	"github.com/wpg-dev/wpg/recv"
	"github.com/wpg-dev/wpg/report"
)

// TestMergeReceivers merges two receivers' --json reports: counts summed,
// the latency p99 that of both histograms merged; a receiver's report
// without its histogram, and a sender's report beside a receiver's, are
// refused in one line (exit 2).
func TestMergeReceivers(t *testing.T) {
	dir := t.TempDir()
	all := hist.New(1, 100_000_000_000)
	write := func(name string, from, n uint64, base int64, withHist bool) string {
		tr := recv.NewTracker()
		for i := range n {
			lat := base + int64(i*i)
			tr.Observe(uint16(from), i, 1000, 1000+lat, 64)
			all.Record(lat)
		}
		b, err := tr.Result().MarshalPeer()
		if err != nil {
			t.Fatal(err)
		}
		if !withHist {
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			delete(m, "latency_histogram")
			b, _ = json.Marshal(m)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.json", 0, 1000, 5_000, true)
	b := write("b.json", 1, 500, 90_000, true)
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"report", "merge", a, b}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	m, err := recv.UnmarshalPeer(out.Bytes())
	if err != nil || m.Frames != 1500 || m.Latency == nil || m.Latency.P99Ns != all.Quantile(99) || m.Receivers != 2 {
		t.Fatalf("merged: %v %+v (p99 want %d)", err, m.Latency, all.Quantile(99))
	}

	noHist := write("old.json", 2, 10, 1, false)
	send := filepath.Join(dir, "send.json")
	_ = os.WriteFile(send, []byte(`{"schema": "wpg.report/v2", "command": "send"}`), 0o644)
	merged := filepath.Join(dir, "merged.json")
	_ = os.WriteFile(merged, out.Bytes(), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{a, noHist}, "old.json: has a latency but no latency_histogram"},
		{[]string{a, send}, "send.json is a wpg.report/v2 report and " + a + " a wpg.recv/v1 report"},
		{[]string{filepath.Join(dir, "none.json")}, "no such file"},
		// A merged report beside one of its inputs counted that
		// receiver twice.
		{[]string{a, merged}, "merged.json: is a merged report (of " + a + ", " + b + ")"},
		// The same file twice counted its receiver twice.
		{[]string{a, b, dir + "/./a.json"}, dir + "/./a.json is " + a + " again: give each report once"},
	} {
		out.Reset()
		errb.Reset()
		code := Main(context.Background(), append([]string{"report", "merge"}, c.args...), &out, &errb)
		if code != ExitUsage || !strings.Contains(errb.String(), c.want) || strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, errb.String(), c.want)
		}
	}
}

// TestReportHTML (issue #29): wpg report html writes a report as one
// page (-o FILE, or standard output), and refuses what is not a report
// as a usage error that names the file.
func TestReportHTML(t *testing.T) {
	page := filepath.Join(t.TempDir(), "run.html")
	if out, errs, code := wpg(t, "report", "html", "../../../report/html/testdata/send.json", "-o", page); code != 0 || out != "" {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	b, err := os.ReadFile(page)
	if err != nil || !strings.Contains(string(b), `<table id="streams">`) || strings.Contains(strings.ToLower(string(b)), "http") {
		t.Fatalf("%v: page %.200s", err, b)
	}
	out, _, code := wpg(t, "report", "html", "../../../report/html/testdata/matrix.json")
	if code != 0 || !strings.HasPrefix(out, "<!DOCTYPE html>") {
		t.Errorf("to standard output: exit %d, %.100s", code, out)
	}
	checkUsage(t, []usageCase{
		{"not a report", []string{"report", "html", "report_test.go"}, []string{"report html: report_test.go", "not a wpg JSON report"}},
		{"missing", []string{"report", "html", "nonesuch.json"}, []string{"report html", "nonesuch.json"}},
	})
}

// TestReportInputErrors: wpg report html and merge say where a report's
// JSON goes wrong (file, line, column, the field by its JSON name) as
// wpg plot does, and a --json-stream log given for a report is named as
// one with what to give instead (exit 2).
func TestReportInputErrors(t *testing.T) {
	dir := t.TempDir()
	put := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	typ := put("type.json", "{\"schema\": \"wpg.report/v2\",\n \"frames\": \"x\"}")
	cut := put("cut.json", "{\"schema\": \"wpg.report/v2\",\n \"frames\": 1")
	stream := put("run.jsonl", `{"event": "start", "data": {"schema": "wpg.report/v2", "command": "send"}}`+"\n"+
		`{"event": "end", "data": {"schema": "wpg.report/v2", "command": "send"}}`+"\n")
	// merge refuses a file given twice: each its copy as the second.
	typ2 := put("type2.json", "{\"schema\": \"wpg.report/v2\",\n \"frames\": \"x\"}")
	cut2 := put("cut2.json", "{\"schema\": \"wpg.report/v2\",\n \"frames\": 1")
	stream2 := put("run2.jsonl", `{"event": "start", "data": {"schema": "wpg.report/v2", "command": "send"}}`+"\n")
	html := filepath.Join(dir, "x.html")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "html", typ, "-o", html}, `type.json: wpg.report/v2 report: line 2, column 12: field "frames" is a JSON string: want a number`},
		{[]string{"report", "merge", typ, typ2}, `type.json: line 2, column 12: field "frames" is a JSON string: want a number`},
		{[]string{"report", "html", cut, "-o", html}, "cut.json: not a wpg JSON report: line 2, column 13: the JSON ends early"},
		{[]string{"report", "merge", cut, cut2}, "cut.json: not a wpg JSON report: line 2, column 13: the JSON ends early"},
		{[]string{"report", "html", stream, "-o", html}, "line 2, column 2: a --json-stream log"},
		{[]string{"report", "merge", stream, stream2}, "line 2, column 2: a --json-stream log"},
		{[]string{"plot", stream, "-o", filepath.Join(dir, "x.svg")}, "line 2, column 2: a --json-stream log"},
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), c.args, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d: %s; want exit 2 and %q", c.args[:2], code, errb.String(), c.want)
		}
	}
}

// TestRecvEndIntervalLatency: the interval that the end of a receiver's
// run closes gets the latency p99 of its own frames (the whole histogram
// less the windows the progress reported), and so does the last one when
// the end only added frames to it; wpg recv --interval's last interval
// had none, its frames measured but not shown.
func TestRecvEndIntervalLatency(t *testing.T) {
	all, first := hist.New(1, 100_000_000_000), hist.New(1, 100_000_000_000)
	for i := range 1000 {
		all.Record(5_000)
		first.Record(5_000 + int64(i%3))
	}
	for range 500 {
		all.Record(90_000) // the end's frames
	}
	tot, _ := json.Marshal(all)
	w, _ := json.Marshal(first)
	windows := []hdrWindow{{0, 1, w}}
	// The end closed an interval of its own.
	ivs := []report.Interval{{Start: 0, End: 1, Frames: 1000, LatencyP99Ns: 5_002}, {Start: 1, End: 1.5, Frames: 500}}
	endLatency(ivs, 1, slices.Clone(windows), tot, 1.5)
	if ivs[0].LatencyP99Ns != 5_002 || ivs[1].LatencyP99Ns < 89_000 || ivs[1].LatencyP99Ns > 91_000 {
		t.Errorf("the end's own interval: %+v; want the first kept and the second's p99 about 90 µs", ivs)
	}
	// The end added its frames to the last interval: its p99 is of both.
	one := []report.Interval{{Start: 0, End: 1.2, Frames: 1500, LatencyP99Ns: 5_002}}
	endLatency(one, 1, slices.Clone(windows), tot, 1.2)
	if one[0].LatencyP99Ns < 89_000 {
		t.Errorf("the last interval with the end's frames: %+v; want a p99 of about 90 µs", one)
	}
}
