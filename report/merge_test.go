package report

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/hist"
	"github.com/wpg-dev/wpg/recv"
)

// segmentReport is a paced segment's report with the lateness values
// given, started at start, lasting secs.
func segmentReport(t *testing.T, seg string, start time.Time, secs float64, frames uint64, lateness []int64) *Report {
	t.Helper()
	h := hist.New(1, 10_000_000_000)
	var sum int64
	for _, v := range lateness {
		h.Record(v)
		sum += v
	}
	hb, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	tr := recv.NewTracker()
	for i := range frames {
		tr.Observe(0, i*3, 1000, 1000+int64(len(seg))*1000+int64(i), 64)
	}
	vb, err := tr.Result().MarshalPeer()
	if err != nil {
		t.Fatal(err)
	}
	return &Report{
		Schema: Schema, Command: "send", Job: "wpg-0123456789abcdef", Segment: seg, Started: start.Format(time.RFC3339Nano),
		Frames: frames, Bytes: frames * 64, Seconds: secs, PPS: float64(frames) / secs, BPS: float64(frames*64*8) / secs,
		Rate: "30kpps", TargetPPS: 10000, AchievedRatio: 0.5, Stop: "count",
		LatenessP50Ns: h.Quantile(50), LatenessP99Ns: h.Quantile(99), LatenessMaxNs: slices.Max(lateness), LatenessMeanNs: sum / int64(len(lateness)),
		LatenessHistogram: hb, Verification: vb,
		Workers:     []Worker{{Worker: 0, Frames: frames}},
		Streams:     []Stream{{Stream: 0, Name: "udp", Frames: frames}},
		Environment: map[string]string{"host": seg},
	}
}

// TestMergeExact merges three segments: counters summed, the time the
// union of their spans, the lateness percentiles those of all the values
// together (not an average of the segments'), the receivers' latency from
// their merged histograms, every input's environment kept.
func TestMergeExact(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := []int64{100, 200, 300, 400, 50_000}
	b := []int64{1000, 1100, 1200, 1300, 1400, 1500, 1600}
	c := []int64{7, 8, 9_000_000}
	in := []Named{
		{"a.json", segmentReport(t, "0/3", t0, 2, 20000, a)},
		{"b.json", segmentReport(t, "1/3", t0.Add(time.Second), 2, 20000, b)},   // overlaps a
		{"c.json", segmentReport(t, "2/3", t0.Add(5*time.Second), 1, 10000, c)}, // a gap of 2 s
	}
	m, err := Merge(in...)
	if err != nil {
		t.Fatal(err)
	}
	all := hist.New(1, 10_000_000_000)
	var sum int64
	for _, v := range append(append(append([]int64{}, a...), b...), c...) {
		all.Record(v)
		sum += v
	}
	if m.Frames != 50000 || m.Bytes != 50000*64 || m.Seconds != 4 || m.PPS != 12500 || m.Started != in[0].Report.Started {
		t.Errorf("frames %d, bytes %d, seconds %v, pps %v, started %s", m.Frames, m.Bytes, m.Seconds, m.PPS, m.Started)
	}
	if m.LatenessP99Ns != all.Quantile(99) || m.LatenessP50Ns != all.Quantile(50) || m.LatenessMaxNs != 9_000_000 {
		t.Errorf("p50 %d p99 %d max %d; the values together: p50 %d p99 %d", m.LatenessP50Ns, m.LatenessP99Ns, m.LatenessMaxNs, all.Quantile(50), all.Quantile(99))
	}
	avg := (in[0].Report.LatenessP99Ns + in[1].Report.LatenessP99Ns + in[2].Report.LatenessP99Ns) / 3
	if m.LatenessP99Ns == avg {
		t.Errorf("p99 %d is the average of the segments'", m.LatenessP99Ns)
	}
	var h hist.Hist
	if err := json.Unmarshal(m.LatenessHistogram, &h); err != nil || h.Count() != int64(len(a)+len(b)+len(c)) {
		t.Errorf("merged histogram: %v, %d values", err, h.Count())
	}
	if want := sum / int64(h.Count()); m.LatenessMeanNs < want-3 || m.LatenessMeanNs > want+3 {
		t.Errorf("mean %d, want %d", m.LatenessMeanNs, want)
	}
	if m.TargetPPS != 30000 || m.AchievedRatio != 0.5 {
		t.Errorf("target %v, achieved %v", m.TargetPPS, m.AchievedRatio)
	}
	v, err := recv.UnmarshalPeer(m.Verification)
	if err != nil || v.Frames != 50000 || v.Receivers != 3 || !v.HasHistogram() {
		t.Errorf("verification: %v, %d frames, %d receivers", err, v.Frames, v.Receivers)
	}
	if len(m.Inputs) != 3 || m.Inputs[2].Environment.(map[string]string)["host"] != "2/3" || m.Environment != nil {
		t.Errorf("inputs %+v", m.Inputs)
	}
	if len(m.Workers) != 3 || m.Workers[1].Segment != "segment 1/3" || m.Workers[2].Worker != 2 {
		t.Errorf("workers %+v", m.Workers)
	}
	if len(m.Streams) != 1 || m.Streams[0].Frames != 50000 || m.Segment != "" || m.Stop != "count" {
		t.Errorf("streams %+v, segment %q, stop %q", m.Streams, m.Segment, m.Stop)
	}
}

// TestMergeRefuses reports of another job, command or schema, a segment
// twice, a paced report without its histogram; and notes a missing
// segment.
func TestMergeRefuses(t *testing.T) {
	t0 := time.Now()
	good := func(seg string) *Report { return segmentReport(t, seg, t0, 1, 10, []int64{5}) }
	for _, c := range []struct {
		name string
		edit func(*Report)
		want string
	}{
		{"another job", func(r *Report) { r.Job = "wpg-ffffffffffffffff" }, "is of job wpg-ffffffffffffffff"},
		{"v1", func(r *Report) { r.Schema = "wpg.report/v1" }, "run it again with this wpg"},
		{"a bench", func(r *Report) { r.Command = "bench" }, "a bench report"},
		{"twice", func(r *Report) { r.Segment = "0/3" }, "is segment 0/3, as a.json is"},
		{"no histogram", func(r *Report) { r.LatenessHistogram = nil }, "without lateness_histogram"},
		{"another count", func(r *Report) { r.Segment = "1/4" }, "a segment of 4"},
	} {
		b := good("1/3")
		c.edit(b)
		_, err := Merge(Named{"a.json", good("0/3")}, Named{"b.json", b})
		var me *MergeError
		if !errors.As(err, &me) || me.File != "b.json" || !strings.Contains(err.Error(), c.want) || me.Fix == "" {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	m, err := Merge(Named{"a.json", good("0/3")}, Named{"c.json", good("2/3")})
	if err != nil || len(m.Notes) == 0 || !strings.Contains(m.Notes[0], "1/3 missing") {
		t.Errorf("missing segment: %v %q", err, m.Notes)
	}
	// A merged report is not a segment's: merged again with one of its
	// inputs it counted that segment twice.
	_, err = Merge(Named{"a.json", good("0/3")}, Named{"m.json", m})
	var me *MergeError
	if !errors.As(err, &me) || me.File != "m.json" || !strings.Contains(err.Error(), "is a merged report (of a.json, c.json)") || !strings.Contains(me.Fix, "merge the segments' own reports") {
		t.Errorf("a merged report as an input: %v", err)
	}
}

func TestMergeIntervals(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := segmentReport(t, "0/2", t0, 2, 30, []int64{1})
	a.Intervals = []Interval{{Start: 0, End: 1, Frames: 10}, {Start: 1, End: 2, Frames: 20}}
	b := segmentReport(t, "1/2", t0.Add(500*time.Millisecond), 2, 40, []int64{1})
	b.Intervals = []Interval{{Start: 0, End: 1, Frames: 15}, {Start: 1, End: 2, Frames: 25}}
	m, err := Merge(Named{"a", a}, Named{"b", b})
	if err != nil {
		t.Fatal(err)
	}
	var sum uint64
	for _, iv := range m.Intervals {
		sum += iv.Frames
	}
	if sum != 70 || len(m.Intervals) != 3 || m.Intervals[1].Frames != 35 || m.Intervals[2].End != 2.5 {
		t.Errorf("intervals %+v", m.Intervals)
	}
}

// pairVerification is a port pair receiver's report of frames of stream
// id 0 … frames-1 (every third one skipped when lossy), with latencies
// from lat on, as a pair's report writes it (with its histogram).
func pairVerification(t *testing.T, id uint16, frames uint64, lat int64, lossy bool) json.RawMessage {
	t.Helper()
	tr := recv.NewTracker()
	for i := range frames {
		if lossy && i%3 == 1 {
			continue
		}
		tr.Observe(id, i, 1000, 1000+lat+int64(i), 64)
	}
	b, err := tr.Result().MarshalPeer()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// bidirReport is a bidirectional port pair's segment report: A→B and
// B→A, each of frames, and its two ports.
func bidirReport(t *testing.T, seg string, start time.Time, frames uint64, lat int64) *Report {
	r := segmentReport(t, seg, start, 2, 2*frames, []int64{5})
	r.Rate = "10kpps"
	r.Ports = []Port{{Role: "tx", Interface: "a" + seg, Address: "198.18.0.1/24", Answered: 3}, {Role: "rx", Interface: "b" + seg, Address: "198.18.1.1/24", Answered: 4}}
	for i, name := range []string{"A→B", "B→A"} {
		r.Directions = append(r.Directions, Direction{Direction: name, From: "a", To: "b", Frames: frames, Bytes: frames * 64, Seconds: 2,
			PPS: float64(frames) / 2, BPS: float64(frames*64*8) / 2, TargetPPS: 10000, AchievedRatio: float64(frames) / 20000,
			Verification: pairVerification(t, uint16(i), frames, lat+int64(i)*1_000_000, false), Verdict: "pass"})
	}
	return r
}

// TestMergeDirections: the directions of port pairs' reports merge
// direction by direction, exactly: the senders' counts summed, the time
// the union of the spans, each direction's receivers merged (latency
// percentiles from the merged histograms), the verdict judged again on
// the merged counts; every input's ports kept with its segment. A
// direction whose latency has no histogram is refused.
func TestMergeDirections(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := bidirReport(t, "0/2", t0, 1000, 10_000)
	b := bidirReport(t, "1/2", t0.Add(time.Second), 3000, 500_000)
	b.Directions[1].Verification = pairVerification(t, 1, 3000, 700_000, true) // B→A lost 1000 in segment 1
	b.Directions[1].Verdict = "verification failed: the receiver reports 1000 lost"
	a.Directions[0].Verdict = "rate check failed: achieved 5.00 % of the target 10kpps, under --fail-under 0.5 (50.00 %)"
	m, err := Merge(Named{"a.json", a}, Named{"b.json", b})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Directions) != 2 {
		t.Fatalf("directions %+v; want A→B and B→A", m.Directions)
	}
	for i, d := range m.Directions {
		if d.Direction != [2]string{"A→B", "B→A"}[i] || d.Frames != 4000 || d.Bytes != 4000*64 || d.Seconds != 3 || d.PPS != 4000.0/3 ||
			d.TargetPPS != 20000 || d.AchievedRatio != 4000.0/40000 || d.From != "a" || d.To != "b" {
			t.Errorf("direction %d: %+v", i, d)
		}
		v, err := recv.UnmarshalPeer(d.Verification)
		if err != nil || !v.HasHistogram() || v.Receivers != 2 {
			t.Fatalf("direction %s: verification %v, histogram %v, %d receivers", d.Direction, err, v.HasHistogram(), v.Receivers)
		}
		var parts []recv.Result
		for _, in := range []*Report{a, b} {
			p, _ := recv.UnmarshalPeer(in.Directions[i].Verification)
			parts = append(parts, p)
		}
		want := recv.Merge(parts...)
		if v.Frames != want.Frames || v.Lost != want.Lost || *v.Latency != *want.Latency {
			t.Errorf("direction %s: %+v %+v; want %+v %+v", d.Direction, v, v.Latency, want, want.Latency)
		}
	}
	if ab := m.Directions[0].Verdict; ab != "segment 0/2: rate check failed: achieved 5.00 % of the target 10kpps, under --fail-under 0.5 (50.00 %)" {
		t.Errorf("A→B verdict %q: want segment 0/2's rate check, its receivers passed", ab)
	}
	if ba := m.Directions[1].Verdict; ba != "verification failed: the receiver reports 1000 lost" {
		t.Errorf("B→A verdict %q: want the merged receivers' 1000 lost", ba)
	}
	if len(m.Ports) != 4 || m.Ports[0].Segment != "segment 0/2" || m.Ports[3].Segment != "segment 1/2" || m.Ports[3].Interface != "b1/2" || m.Ports[3].Answered != 4 {
		t.Errorf("ports %+v", m.Ports)
	}

	// A direction's latency without its histogram cannot merge exactly.
	c := bidirReport(t, "1/2", t0, 10, 1)
	v, _ := recv.UnmarshalPeer(c.Directions[1].Verification)
	c.Directions[1].Verification, _ = json.Marshal(v) // the plain form
	_, err = Merge(Named{"a.json", a}, Named{"c.json", c})
	var me *MergeError
	if !errors.As(err, &me) || me.File != "c.json" || !strings.Contains(me.Reason, "B→A") || !strings.Contains(me.Reason, "latency_histogram") || me.Fix == "" {
		t.Errorf("a direction without its histogram: %v", err)
	}
}
