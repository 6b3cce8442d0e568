package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/hist"
	"github.com/wpg-dev/wpg/recv"
)

// Input is one of the reports a merged report was made of (wpg report
// merge): where it came from, its segment and totals, and its machine.
type Input struct {
	// File is the report's name as given to the merge.
	File    string `json:"file"`
	Segment string `json:"segment,omitempty"`
	Started string `json:"started,omitempty"`
	Frames  uint64 `json:"frames"`
	Bytes   uint64 `json:"bytes"`
	// Seconds and PPS are the input's own.
	Seconds float64 `json:"seconds"`
	PPS     float64 `json:"pps"`
	Stop    string  `json:"stop"`
	Error   string  `json:"error,omitempty"`
	// Backend, Environment and Provenance are the input's, as it had
	// them: the machine each segment ran on.
	Backend     backend.Info `json:"backend"`
	Environment any          `json:"environment,omitempty"`
	Provenance  *Provenance  `json:"provenance,omitempty"`
}

// MergeError is why reports cannot be merged: they come from different
// jobs, commands or schema versions, a segment is given twice, or a
// report lacks the histograms an exact merge needs.
type MergeError struct {
	// File is the report at fault (as named to Merge), Reason what is
	// wrong and Fix what to do.
	File, Reason, Fix string
}

func (e *MergeError) Error() string { return e.File + ": " + e.Reason + "; " + e.Fix }

// Named is a report and the name it is known by in errors and in the
// merged report's inputs (its file).
type Named struct {
	Name   string
	Report *Report
}

// Merge combines the reports of one job's segments (wpg send --segment)
// into one report of the same schema, as if one sender had sent them
// all:
//
//   - frames, bytes, CPU time and each stream's frames are summed, and
//     the workers listed one after another, each with its segment;
//   - the time is the union of the reports' spans (started … started +
//     seconds), and the rates are taken over it;
//   - the target is the sum of the targets, the achieved ratio the frames
//     sent over the frames due (each report's frames over its ratio);
//   - the lateness percentiles come from the merged histograms
//     (lateness_histogram), never from averaged percentiles: the
//     lateness mean is weighted by the grants, the maximum the largest;
//   - receivers' verifications are merged as recv.Merge merges them
//     (counts summed, latency percentiles from the merged histograms);
//   - a port pair's directions are merged direction by direction (A→B
//     with A→B): the senders' counts and targets summed, the rates over
//     the union of the direction's spans, the receivers' verifications
//     merged as above, and the verdict judged again on the merged counts
//     (CheckReceived), with any other check an input failed (the rate
//     check) kept under its segment; every input's ports are listed,
//     each with its segment;
//   - intervals, where every report has them, are summed on a grid of the
//     first report's period over the union of time (each input interval
//     in the period its midpoint falls in); their percentiles, which no
//     histogram backs, are left out;
//   - every input's backend, environment and provenance are kept in
//     Inputs, and its notes, each prefixed with its segment.
//
// It refuses (a *MergeError) reports of another schema than Schema, of
// different commands or jobs (Report.Job), a merged report (Inputs), a
// segment given twice, and a
// paced report without its lateness histogram, and a direction whose
// receiver measured latency without its latency_histogram. One report
// comes back as a merge of one.
func Merge(in ...Named) (*Report, error) {
	if len(in) == 0 {
		return nil, errors.New("no reports to merge")
	}
	first := in[0].Report
	for _, n := range in {
		r := n.Report
		switch {
		case r.Schema != Schema:
			fix := "merge reports of this wpg's version, " + Schema
			if r.Schema == "wpg.report/v1" {
				fix = "run it again with this wpg: its " + Schema + " reports carry the histograms and start times an exact merge needs"
			}
			return nil, &MergeError{n.Name, fmt.Sprintf("schema %q, not %s", r.Schema, Schema), fix}
		case r.Job == "":
			return nil, &MergeError{n.Name, "has no job identity", "merge the reports of wpg send or bench (this wpg), which name their job"}
		case r.Job != first.Job:
			return nil, &MergeError{n.Name, fmt.Sprintf("is of job %s, and %s of job %s", r.Job, in[0].Name, first.Job),
				"merge the segments of one job only: the same template, count, duration, rate, workers and number of segments (docs/distributed.md)"}
		case r.Command != first.Command:
			return nil, &MergeError{n.Name, fmt.Sprintf("is a %s report, and %s a %s report", r.Command, in[0].Name, first.Command), "merge reports of one command"}
		case len(r.Inputs) > 0:
			files := make([]string, len(r.Inputs))
			for i, x := range r.Inputs {
				files[i] = x.File
			}
			return nil, &MergeError{n.Name, fmt.Sprintf("is a merged report (of %s): its segments would count again beside their own reports", strings.Join(files, ", ")),
				"merge the segments' own reports (wpg send --json) all at once: wpg report merge " + strings.Join(files, " ") + " …"}
		case r.Rate != "" && r.Frames > 0 && len(r.LatenessHistogram) == 0:
			return nil, &MergeError{n.Name, "is a paced run's report without lateness_histogram", "merge the reports as wpg wrote them (the histogram is what makes the percentiles exact)"}
		}
	}
	segNotes, err := checkSegments(in)
	if err != nil {
		return nil, err
	}
	m := &Report{
		Schema: Schema, Command: first.Command, Template: first.Template, Job: first.Job,
		Backend: first.Backend, Plan: first.Plan, PlanDetail: first.PlanDetail, Batch: first.Batch,
		BPSLayer: first.BPSLayer, Payload: first.Payload, Rate: first.Rate, Wait: first.Wait, WakeBoost: first.WakeBoost,
		Clock: first.Clock, TSC: first.TSC, Verify: first.Verify,
	}
	m.Notes = append(m.Notes, segNotes...)
	spans := make([][2]time.Time, 0, len(in))
	var bits, due float64
	var stops, errs []string
	var lat []*hist.Hist
	var latSum float64
	var latN int64
	var verifications []recv.Result
	inexact := false
	streams := map[int]*mergedStream{}
	var dirs []*mergedDirection
	for _, n := range in {
		r := n.Report
		label := segmentLabel(n)
		m.Frames += r.Frames
		m.Bytes += r.Bytes
		m.PayloadBytes += r.PayloadBytes
		m.CPUSeconds += r.CPUSeconds
		m.TargetPPS += r.TargetPPS
		bits += r.BPS * r.Seconds
		switch {
		case r.AchievedRatio > 0:
			due += float64(r.Frames) / r.AchievedRatio
		case r.TargetPPS > 0:
			due += r.TargetPPS * r.Seconds
		}
		m.LatenessMaxNs = max(m.LatenessMaxNs, r.LatenessMaxNs)
		m.ScheduleLagMaxNs = max(m.ScheduleLagMaxNs, r.ScheduleLagMaxNs)
		if len(r.LatenessHistogram) > 0 {
			var h hist.Hist
			if err := json.Unmarshal(r.LatenessHistogram, &h); err != nil {
				return nil, &MergeError{n.Name, "lateness_histogram: " + err.Error(), "merge the reports as wpg wrote them"}
			}
			lat = append(lat, &h)
			latSum += float64(r.LatenessMeanNs) * float64(h.Count())
			latN += h.Count()
		}
		start, err := time.Parse(time.RFC3339Nano, r.Started)
		if err != nil {
			return nil, &MergeError{n.Name, fmt.Sprintf("started %q is not a time", r.Started), "merge the reports as wpg wrote them"}
		}
		spans = append(spans, [2]time.Time{start, start.Add(time.Duration(r.Seconds * float64(time.Second)))})
		for _, d := range r.Directions {
			i := slices.IndexFunc(dirs, func(md *mergedDirection) bool { return md.Direction.Direction == d.Direction })
			if i < 0 {
				i = len(dirs)
				dirs = append(dirs, &mergedDirection{Direction: Direction{Direction: d.Direction}})
			}
			if err := dirs[i].add(n.Name, label, start, d); err != nil {
				return nil, err
			}
		}
		for _, p := range r.Ports {
			p.Segment = label
			m.Ports = append(m.Ports, p)
		}
		if !slices.Contains(stops, r.Stop) {
			stops = append(stops, r.Stop)
		}
		if r.Error != "" {
			errs = append(errs, label+": "+r.Error)
		}
		for _, w := range r.Workers {
			w.Segment = label
			w.Worker = len(m.Workers)
			m.Workers = append(m.Workers, w)
		}
		for _, st := range r.Streams {
			ms := streams[st.Stream]
			if ms == nil {
				ms = &mergedStream{Stream: st}
				ms.Frames, ms.Datagrams, ms.Bytes, ms.LatenessMaxNs, ms.LatenessMeanNs = 0, 0, 0, nil, nil
				streams[st.Stream] = ms
			}
			ms.add(st)
		}
		if len(r.Verification) > 0 {
			v, err := recv.UnmarshalPeer(r.Verification)
			if err != nil {
				return nil, &MergeError{n.Name, "verification: " + err.Error(), "merge the reports as wpg wrote them"}
			}
			if v.Latency != nil && !v.HasHistogram() {
				inexact = true
			}
			verifications = append(verifications, v)
		}
		for _, note := range r.Notes {
			if note = label + ": " + note; !slices.Contains(m.Notes, note) {
				m.Notes = append(m.Notes, note)
			}
		}
		if r.Backend.Backend != first.Backend.Backend || r.Backend.Mode != first.Backend.Mode {
			note := fmt.Sprintf("the segments sent through different paths: %s (%s, mode %s), %s (%s, mode %s); backend above is the first's", in[0].Name, first.Backend.Backend, first.Backend.Mode, n.Name, r.Backend.Backend, r.Backend.Mode)
			m.Notes = append(m.Notes, note)
		}
		m.Inputs = append(m.Inputs, Input{File: n.Name, Segment: r.Segment, Started: r.Started, Frames: r.Frames, Bytes: r.Bytes,
			Seconds: r.Seconds, PPS: r.PPS, Stop: r.Stop, Error: r.Error, Backend: r.Backend, Environment: r.Environment, Provenance: r.Provenance})
	}
	t0, secs := union(spans)
	m.Started = t0.Format(time.RFC3339Nano)
	m.Seconds = secs
	if m.Frames > 0 {
		m.FrameSize = float64(m.Bytes) / float64(m.Frames)
	} else {
		m.FrameSize = first.FrameSize
	}
	if secs > 0 {
		m.PPS = float64(m.Frames) / secs
		m.BPS = bits / secs
		m.PayloadBytesPerSecond = float64(m.PayloadBytes) / secs
	}
	if due > 0 {
		m.AchievedRatio = float64(m.Frames) / due
	}
	if len(lat) > 0 {
		h := hist.Merged(lat[0].Lo(), lat[0].Hi(), lat...)
		m.LatenessP50Ns, m.LatenessP99Ns = h.Quantile(50), h.Quantile(99)
		if latN > 0 {
			m.LatenessMeanNs = int64(math.Round(latSum / float64(latN)))
		}
		m.LatenessHistogram, _ = json.Marshal(h)
	}
	sort.Strings(stops)
	m.Stop = strings.Join(stops, ", ")
	m.Error = strings.Join(errs, "; ")
	for _, st := range streams {
		m.Streams = append(m.Streams, st.merged(m.Seconds, m.BPSLayer))
	}
	sort.Slice(m.Streams, func(i, j int) bool { return m.Streams[i].Stream < m.Streams[j].Stream })
	if len(verifications) > 0 {
		v := recv.Merge(verifications...)
		m.Verification, _ = v.MarshalPeer()
		if inexact {
			m.Notes = append(m.Notes, "a receiver's report had no latency histogram: the merged latency percentiles are the worst of the receivers', an upper bound")
		}
	}
	for _, md := range dirs {
		m.Directions = append(m.Directions, md.merged())
	}
	m.Intervals = mergeIntervals(in, t0)
	return m, nil
}

// mergedDirection is one direction of port pairs' reports merged.
type mergedDirection struct {
	Direction
	from, to  []string
	spans     [][2]time.Time
	bits, due float64
	vs        []recv.Result
	// other are the inputs' failed checks that their receivers' counts
	// do not explain (the rate check), each under its input's label.
	other []string
}

// add counts one report's part of the direction (d; the report named
// name, labelled label, started at start).
func (md *mergedDirection) add(name, label string, start time.Time, d Direction) error {
	md.Frames += d.Frames
	md.Bytes += d.Bytes
	md.TargetPPS += d.TargetPPS
	md.bits += d.BPS * d.Seconds
	switch {
	case d.AchievedRatio > 0:
		md.due += float64(d.Frames) / d.AchievedRatio
	case d.TargetPPS > 0:
		md.due += d.TargetPPS * d.Seconds
	}
	md.spans = append(md.spans, [2]time.Time{start, start.Add(time.Duration(d.Seconds * float64(time.Second)))})
	if !slices.Contains(md.from, d.From) {
		md.from = append(md.from, d.From)
	}
	if !slices.Contains(md.to, d.To) {
		md.to = append(md.to, d.To)
	}
	if len(d.Verification) > 0 {
		v, err := recv.UnmarshalPeer(d.Verification)
		if err != nil {
			return &MergeError{name, "direction " + d.Direction + ": verification: " + err.Error(), "merge the reports as wpg wrote them"}
		}
		if v.Latency != nil && !v.HasHistogram() {
			return &MergeError{name, "direction " + d.Direction + ": its receiver's latency comes without latency_histogram, so its percentiles cannot be merged exactly",
				"send again with this wpg, whose port pair reports carry each direction's histogram"}
		}
		md.vs = append(md.vs, v)
	}
	if d.Verdict != "" && d.Verdict != "pass" && CheckReceived(d.Verification, d.Frames) == nil {
		md.other = append(md.other, label+": "+d.Verdict)
	}
	return nil
}

// merged is the direction over the union of its spans, judged again.
func (md *mergedDirection) merged() Direction {
	d := md.Direction
	_, secs := union(md.spans)
	d.Seconds = secs
	if secs > 0 {
		d.PPS = float64(d.Frames) / secs
		d.BPS = md.bits / secs
	}
	if md.due > 0 {
		d.AchievedRatio = float64(d.Frames) / md.due
	}
	d.From, d.To = strings.Join(md.from, ", "), strings.Join(md.to, ", ")
	if len(md.vs) > 0 {
		d.Verification, _ = recv.Merge(md.vs...).MarshalPeer()
	}
	var bad []string
	if f := CheckReceived(d.Verification, d.Frames); f != nil {
		bad = append(bad, f.Message)
	}
	bad = append(bad, md.other...)
	d.Verdict = "pass"
	if len(bad) > 0 {
		d.Verdict = strings.Join(bad, "; ")
	}
	return d
}

// segmentLabel names an input in the merged report: its segment, else
// its name.
func segmentLabel(n Named) string {
	if n.Report.Segment != "" {
		return "segment " + n.Report.Segment
	}
	return n.Name
}

// checkSegments refuses a segment given twice or segments of different
// counts, and notes the segments of the job that are missing.
func checkSegments(in []Named) ([]string, error) {
	seen := map[string]string{}
	total := 0
	for _, n := range in {
		s := n.Report.Segment
		if s == "" {
			continue
		}
		if prev, ok := seen[s]; ok {
			return nil, &MergeError{n.Name, fmt.Sprintf("is segment %s, as %s is", s, prev), "give each segment's report once"}
		}
		seen[s] = n.Name
		var i, of int
		if _, err := fmt.Sscanf(s, "%d/%d", &i, &of); err != nil {
			return nil, &MergeError{n.Name, fmt.Sprintf("segment %q is not I/N", s), "merge the reports as wpg wrote them"}
		}
		if total != 0 && of != total {
			return nil, &MergeError{n.Name, fmt.Sprintf("is a segment of %d, the others of %d", of, total), "merge the segments of one job only"}
		}
		total = of
	}
	if total == 0 || len(seen) == total {
		return nil, nil
	}
	var missing []string
	for i := range total {
		if s := fmt.Sprintf("%d/%d", i, total); seen[s] == "" {
			missing = append(missing, s)
		}
	}
	return []string{fmt.Sprintf("this merge holds %d of the job's %d segments: %s missing", len(seen), total, strings.Join(missing, ", "))}, nil
}

// union returns the earliest start of spans and the length of their
// union in seconds (overlapping spans count once, a gap between them not
// at all).
func union(spans [][2]time.Time) (time.Time, float64) {
	sort.Slice(spans, func(i, j int) bool { return spans[i][0].Before(spans[j][0]) })
	t0 := spans[0][0]
	var total time.Duration
	cur := spans[0]
	for _, s := range spans[1:] {
		if s[0].After(cur[1]) {
			total += cur[1].Sub(cur[0])
			cur = s
			continue
		}
		if s[1].After(cur[1]) {
			cur[1] = s[1]
		}
	}
	total += cur[1].Sub(cur[0])
	return t0, total.Seconds()
}

// mergeIntervals sums the inputs' intervals on one grid over the union of
// time, from t0 with the first input's period (the median length of its
// intervals): each interval is counted
// in the period its midpoint falls in. Nil unless every input has
// intervals.
func mergeIntervals(in []Named, t0 time.Time) []Interval {
	for _, n := range in {
		if len(n.Report.Intervals) == 0 {
			return nil
		}
	}
	// The period: the median length of the first report's intervals (a
	// sample taken late on a loaded machine makes one longer).
	var lens []float64
	for _, iv := range in[0].Report.Intervals {
		lens = append(lens, iv.End-iv.Start)
	}
	sort.Float64s(lens)
	period := lens[len(lens)/2]
	if !(period > 0) {
		return nil
	}
	var out []Interval
	var ends []float64
	for _, n := range in {
		r := n.Report
		start, _ := time.Parse(time.RFC3339Nano, r.Started)
		off := start.Sub(t0).Seconds()
		for _, iv := range r.Intervals {
			mid := off + (iv.Start+iv.End)/2
			k := int(mid / period)
			for len(out) <= k {
				out = append(out, Interval{Start: float64(len(out)) * period, End: float64(len(out)+1) * period})
				ends = append(ends, 0)
			}
			o := &out[k]
			o.Frames += iv.Frames
			o.Bytes += iv.Bytes
			if iv.Lost != nil {
				o.Lost = addInt(o.Lost, *iv.Lost)
			}
			if iv.Corrupted != nil {
				c := *iv.Corrupted
				if o.Corrupted != nil {
					c += *o.Corrupted
				}
				o.Corrupted = &c
			}
			ends[k] = max(ends[k], off+iv.End)
		}
	}
	if n := len(out); n > 0 {
		out[n-1].End = max(out[n-1].Start, ends[n-1]) // the last period ends with the last input
	}
	for i := range out {
		if dt := out[i].End - out[i].Start; dt > 0 {
			out[i].PPS = float64(out[i].Frames) / dt
			out[i].BPS = float64(out[i].Bytes) * 8 / dt
		}
	}
	return out
}

func addInt(p *int64, v int64) *int64 {
	if p != nil {
		v += *p
	}
	return &v
}

// mergedStream is one stream of several reports merged: counts summed,
// its frames' lateness the largest and the mean weighted by frames.
type mergedStream struct {
	Stream
	lateFrames uint64
	lateSum    float64
	lateMax    int64
}

// add counts one report's part of the stream.
func (ms *mergedStream) add(st Stream) {
	ms.Frames += st.Frames
	ms.Datagrams += st.Datagrams
	ms.Bytes += st.Bytes
	if st.LatenessMaxNs != nil && st.LatenessMeanNs != nil {
		ms.lateFrames += st.Frames
		ms.lateSum += float64(*st.LatenessMeanNs) * float64(st.Frames)
		ms.lateMax = max(ms.lateMax, *st.LatenessMaxNs)
		ms.LatenessMaxNs = &ms.lateMax
	}
}

// merged is the stream over the merged run's seconds, its bits at layer.
func (ms *mergedStream) merged(seconds float64, layer string) Stream {
	st := ms.Stream
	st.SetRates(seconds, layer)
	if st.LatenessMaxNs != nil {
		most, mean := ms.lateMax, int64(0)
		if ms.lateFrames > 0 {
			mean = int64(math.Round(ms.lateSum / float64(ms.lateFrames)))
		}
		st.LatenessMaxNs, st.LatenessMeanNs = &most, &mean
	}
	return st
}
