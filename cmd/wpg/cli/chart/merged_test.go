package chart

import (
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/report"
)

// TestMergedPicture: wpg plot draws a merged report (wpg report merge)
// like any other: the segments' rate over the union of their time, and a
// v1 report still reads.
func TestMergedPicture(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	seg := func(s string, off time.Duration) *report.Report {
		r := &report.Report{Schema: report.Schema, Command: "send", Job: "wpg-0123456789abcdef", Segment: s,
			Started: t0.Add(off).Format(time.RFC3339Nano), Frames: 22, Seconds: 2, Stop: "count",
			Intervals: []report.Interval{{Start: 0, End: 1, Frames: 10, PPS: 10}, {Start: 1, End: 2, Frames: 12, PPS: 12}}}
		r.Backend.Backend = "null"
		return r
	}
	m, err := report.Merge(report.Named{Name: "a.json", Report: seg("0/2", 0)}, report.Named{Name: "b.json", Report: seg("1/2", time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	svg := render(t, m, "svg")
	if !strings.Contains(svg, "wpg send null: rate") {
		t.Error("the merged report's rate is not drawn")
	}
	v1 := *m
	v1.Schema = "wpg.report/v1"
	if svg := render(t, v1, "svg"); !strings.Contains(svg, "rate") {
		t.Error("a v1 report is not drawn")
	}
}
