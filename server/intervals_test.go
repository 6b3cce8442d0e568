package server

import (
	"encoding/json"
	"testing"

	"github.com/wpg-dev/wpg/report"
)

// TestSampleIntervals: a job's samples become the report's intervals,
// each from the sample before to its own second (the last to the report's
// seconds), the frames sent and lost in it; a long job's are grouped into
// MaxChartSamples intervals that still add up to the totals; and
// withIntervals adds them to a report that has none, keeping its members.
func TestSampleIntervals(t *testing.T) {
	lost := func(n int64) *int64 { return &n }
	xs := []Sample{
		{T: 1, Frames: 1000, Bytes: 64000, PPS: 1000, BPS: 512000, LatenessP99Ns: 50, Lost: lost(0)},
		{T: 3, Frames: 3000, Bytes: 192000, PPS: 1000, BPS: 512000, LatenessP99Ns: 70, Lost: lost(2), LatencyP99Ns: 900}, // a late timer skipped second 2
		{T: 4, Frames: 3500, Bytes: 224000, PPS: 1000, BPS: 512000, Lost: lost(1)},                                       // the part second to 3.5 s
	}
	ivs := sampleIntervals(xs, 3.5)
	want := []report.Interval{
		{Start: 0, End: 1, Frames: 1000, Bytes: 64000, PPS: 1000, BPS: 512000, LatenessP99Ns: 50, Lost: lost(0)},
		{Start: 1, End: 3, Frames: 2000, Bytes: 128000, PPS: 1000, BPS: 512000, LatenessP99Ns: 70, Lost: lost(2), LatencyP99Ns: 900},
		{Start: 3, End: 3.5, Frames: 500, Bytes: 32000, PPS: 1000, BPS: 512000, Lost: lost(-1)},
	}
	if got, _ := json.Marshal(ivs); string(got) != string(must(json.Marshal(want))) {
		t.Errorf("intervals\n%s\nwant\n%s", got, must(json.Marshal(want)))
	}

	// Two hours of seconds: 3600 intervals of two seconds each.
	long := make([]Sample, 7200)
	for i := range long {
		long[i] = Sample{T: int64(i + 1), Frames: uint64(i+1) * 10, Bytes: uint64(i+1) * 640, PPS: 10, BPS: 5120, LatenessP99Ns: int64(i)}
	}
	ivs = sampleIntervals(long, 7200)
	var frames uint64
	for _, in := range ivs {
		frames += in.Frames
	}
	if len(ivs) != MaxChartSamples || frames != 72000 || ivs[1].Start != 2 || ivs[1].End != 4 || ivs[1].PPS != 10 || ivs[1].LatenessP99Ns != 3 || ivs[1].Lost != nil {
		t.Errorf("%d intervals, %d frames; the second %+v", len(ivs), frames, ivs[1])
	}
	if len(sampleIntervals(nil, 1)) != 0 {
		t.Error("intervals without samples")
	}

	// The report gets them last; one that has intervals keeps its own.
	doc := []byte("{\n  \"schema\": \"wpg.report/v2\",\n  \"frames\": 3500\n}\n")
	out := withIntervals(doc, want[:1])
	if string(out) != "{\n  \"schema\": \"wpg.report/v2\",\n  \"frames\": 3500\n,\"intervals\":"+string(must(json.Marshal(want[:1])))+"}" {
		t.Errorf("withIntervals: %s", out)
	}
	if again := withIntervals(out, want); string(again) != string(out) {
		t.Errorf("a report with intervals got others: %s", again)
	}
	if got := withIntervals([]byte(`{}`), want[:1]); string(got) != `{"intervals":`+string(must(json.Marshal(want[:1])))+`}` {
		t.Errorf("withIntervals of {}: %s", got)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
