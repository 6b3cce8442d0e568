package html

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/wpg-dev/wpg/bench"
	"github.com/wpg-dev/wpg/ndr"
	"github.com/wpg-dev/wpg/recv"
	"github.com/wpg-dev/wpg/report"
	"github.com/wpg-dev/wpg/units"
)

// recvDoc is `wpg recv --json`: the receiver's result, where and when it
// ran, and its intervals.
type recvDoc struct {
	recv.Result
	Provenance *report.Provenance `json:"provenance"`
	Intervals  []report.Interval  `json:"intervals"`
	// Inputs are a merge's receivers (wpg report merge).
	Inputs []struct {
		File       string             `json:"file"`
		Frames     uint64             `json:"frames"`
		Seconds    float64            `json:"seconds"`
		Provenance *report.Provenance `json:"provenance"`
	} `json:"inputs"`
}

// sendPage lays out a send or bench report (merged ones too).
func sendPage(r *report.Report) *page {
	p := &page{Title: "wpg " + r.Command}
	if r.Template != "" {
		p.Title += " " + r.Template
	}
	p.Subtitle = subtitle(r.Schema, r.Job, r.Segment, r.Provenance)
	be := r.Backend.Backend + ", mode " + r.Backend.Mode
	if r.Backend.Interface != "" {
		be += " on " + r.Backend.Interface
	}
	add := func(k, v string) { p.Summary = append(p.Summary, kv{k, v}) }
	add("backend", be)
	add("plan", strings.TrimSpace(r.Plan+" "+paren(r.PlanDetail)))
	add("workers", fmt.Sprintf("%d, batch %d", len(r.Workers), r.Batch))
	add("frames", fmt.Sprintf("%s (%.1f bytes mean)", count(r.Frames), r.FrameSize))
	add("bytes", units.FormatSizeApprox(int64(r.Bytes)))
	add("seconds", fmt.Sprintf("%.3f", r.Seconds))
	layer := strings.ToUpper(cmp.Or(r.BPSLayer, "l2"))
	if r.Payload {
		add("rate", si(r.PPS, "frames/s")+", "+si(r.PayloadBytesPerSecond, "B/s")+" of payload")
	} else {
		add("rate", si(r.PPS, "pps")+", "+si(r.BPS, "bit/s")+" ("+layer+")")
	}
	if r.Rate != "" {
		add("target", fmt.Sprintf("%s = %s, achieved %.2f %% (wait %s)", r.Rate, si(r.TargetPPS, "pps"), r.AchievedRatio*100, r.Wait))
		add("lateness", fmt.Sprintf("max %s, mean %s, p50 %s, p99 %s", ns(r.LatenessMaxNs), ns(r.LatenessMeanNs), ns(r.LatenessP50Ns), ns(r.LatenessP99Ns)))
	}
	add("clock", r.Clock)
	add("cpu", fmt.Sprintf("%.2f s", r.CPUSeconds))
	add("stop", r.Stop)
	if r.Error != "" {
		add("error", r.Error)
	}
	if len(r.Verification) > 0 {
		var v recv.Result
		if json.Unmarshal(r.Verification, &v) == nil {
			add("receiver", receiverLine(&v))
		}
	}
	p.Notes = r.Notes
	p.Charts = append(p.Charts, timeline(r.Intervals, r.TargetPPS)...)
	if len(r.Streams) > 0 {
		var bars []bar
		for i, st := range r.Streams {
			bars = append(bars, bar{Label: fmt.Sprintf("%d %s", st.Stream, st.Name), Value: st.PPS, Colour: palette[i%len(palette)]})
		}
		p.Charts = append(p.Charts, barChart("frame rate per stream", "pps", bars))
	}
	if r.Rate != "" && r.LatenessMaxNs > 0 {
		p.Charts = append(p.Charts, barChart("lateness of the pacer's grants", "ns", []bar{
			{Label: "p50", Value: float64(r.LatenessP50Ns)}, {Label: "p99", Value: float64(r.LatenessP99Ns)}, {Label: "max", Value: float64(r.LatenessMaxNs)}}))
	}
	if len(r.Verification) > 0 {
		var v recv.Result
		if json.Unmarshal(r.Verification, &v) == nil && v.Latency != nil {
			p.Charts = append(p.Charts, latencyChart(v.Latency))
		}
	}
	p.Tables = append(p.Tables, sendStreams(r))
	if len(r.Workers) > 0 {
		t := table{ID: "workers", Title: "Workers", Head: []string{"worker", "cpu", "frames", "bytes", "seconds", "pps", "cpu seconds", "mode", "segment", "error"}, Text: map[int]bool{7: true, 8: true, 9: true}}
		for _, w := range r.Workers {
			cpu := "unpinned"
			if w.CPU >= 0 {
				cpu = strconv.Itoa(w.CPU)
			}
			t.Rows = append(t.Rows, []string{strconv.Itoa(w.Worker), cpu, count(w.Frames), count(w.Bytes), fmt.Sprintf("%.3f", w.Seconds), si(w.PPS, ""), fmt.Sprintf("%.3f", w.CPUSeconds), w.Mode, w.Segment, w.Error})
		}
		p.Tables = append(p.Tables, t)
	}
	if len(r.Inputs) > 0 {
		t := table{ID: "inputs", Title: "Reports merged", Head: []string{"file", "segment", "started", "frames", "seconds", "pps", "stop", "host"}, Text: map[int]bool{0: true, 1: true, 2: true, 6: true, 7: true}}
		for _, in := range r.Inputs {
			host := ""
			if in.Provenance != nil {
				host = in.Provenance.Host
			}
			t.Rows = append(t.Rows, []string{in.File, in.Segment, in.Started, count(in.Frames), fmt.Sprintf("%.3f", in.Seconds), si(in.PPS, ""), in.Stop, host})
		}
		p.Tables = append(p.Tables, t)
	}
	p.Env = environment(r.Environment, r.Provenance)
	for _, in := range r.Inputs {
		if len(p.Env) == 0 && in.Environment != nil {
			p.Env = environment(in.Environment, in.Provenance) // a merge's own is its inputs'
		}
	}
	return p
}

// sendStreams is a send report's per-stream table (one row for a
// payload run, which has no streams: the run itself).
func sendStreams(r *report.Report) table {
	t := table{ID: "streams", Title: "Streams", Head: []string{"stream", "name", "frames", "bytes", "pps", "bps", "rate", "burst", "late max", "late mean"}, Text: map[int]bool{1: true, 6: true, 7: true}}
	for _, st := range r.Streams {
		late, mean := "", ""
		if st.LatenessMaxNs != nil && st.LatenessMeanNs != nil {
			late, mean = ns(*st.LatenessMaxNs), ns(*st.LatenessMeanNs)
		}
		frames := count(st.Frames)
		if st.Datagrams > 0 {
			frames += fmt.Sprintf(" (%s datagrams)", count(st.Datagrams))
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(st.Stream), st.Name, frames, count(st.Bytes), si(st.PPS, ""), si(st.BPS, ""), st.Rate, st.Mode, late, mean})
	}
	if len(r.Streams) == 0 {
		t.Rows = append(t.Rows, []string{"-", "(payload frames: one stream, the run)", count(r.Frames), count(r.Bytes), si(r.PPS, ""), si(r.BPS, ""), r.Rate, "", "", ""})
	}
	return t
}

// recvPage lays out a receiver's report (merged ones too).
func recvPage(r *recvDoc) *page {
	p := &page{Title: "wpg recv"}
	if r.Receivers > 1 {
		p.Title += fmt.Sprintf(" (%d receivers merged)", r.Receivers)
	}
	p.Subtitle = subtitle(r.Schema, "", "", r.Provenance)
	add := func(k, v string) { p.Summary = append(p.Summary, kv{k, v}) }
	if b := r.Backend; b != nil {
		line := b.Backend
		if b.Mode != "" {
			line += " (" + b.Mode + ")"
		}
		if b.Interface != "" {
			line += " on " + b.Interface
		}
		add("receiver", line)
	}
	add("frames", fmt.Sprintf("%s (%s)", count(r.Frames), units.FormatSizeApprox(int64(r.Bytes))))
	if r.Expected > 0 {
		add("expected", fmt.Sprintf("%s, missing %s", count(r.Expected), count(r.Missing)))
	}
	for _, c := range []struct {
		k string
		n uint64
	}{{"lost", r.Lost}, {"duplicated", r.Duplicated}, {"reordered", r.Reordered}, {"corrupted", r.Corrupted}, {"without signature", r.Unsigned}, {"wrong stream", r.WrongStream}} {
		add(c.k, count(c.n))
	}
	if r.Seconds > 0 {
		add("rate", fmt.Sprintf("%s, %s (%s) over %.3f s", si(r.PPS, "pps"), si(r.BPS, "bit/s"), strings.ToUpper(cmp.Or(r.BPSLayer, "l2")), r.Seconds))
	}
	if l := r.Latency; l != nil {
		add("latency", fmt.Sprintf("min %s, p50 %s, p99 %s, p99.9 %s, max %s (%s samples)", ns(l.MinNs), ns(l.P50Ns), ns(l.P99Ns), ns(l.P999Ns), ns(l.MaxNs), count(l.Samples)))
	}
	if r.JitterNs > 0 {
		add("jitter", ns(r.JitterNs)+" (RFC 3550 interarrival jitter)")
	}
	add("stop", r.Stop)
	p.Charts = append(p.Charts, timeline(r.Intervals, 0)...)
	if r.Latency != nil {
		p.Charts = append(p.Charts, latencyChart(r.Latency))
	}
	t := table{ID: "streams", Title: "Streams", Head: []string{"stream", "frames", "bytes", "lost", "duplicated", "reordered", "corrupted", "next seq", "latency mean", "latency max", "jitter"}}
	var bars []bar
	for i, s := range r.Streams {
		mean, most, jit := "", "", ""
		if s.LatencyMeanNs > 0 {
			mean, most = ns(int64(s.LatencyMeanNs)), ns(s.LatencyMaxNs)
		}
		if s.JitterNs > 0 {
			jit = ns(s.JitterNs)
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(int(s.Stream)), count(s.Frames), count(s.Bytes), count(s.Lost), count(s.Duplicated), count(s.Reordered), count(s.Corrupted), count(s.NextSeq), mean, most, jit})
		bars = append(bars, bar{Label: "stream " + strconv.Itoa(int(s.Stream)), Value: float64(s.Frames), Note: lostNote(s), Colour: palette[i%len(palette)]})
	}
	if len(bars) > 0 {
		p.Charts = append(p.Charts, barChart("frames received per stream", "", bars))
	}
	p.Tables = append(p.Tables, t)
	if len(r.Inputs) > 0 {
		t := table{ID: "inputs", Title: "Reports merged", Head: []string{"file", "frames", "seconds", "host", "start"}, Text: map[int]bool{0: true, 3: true, 4: true}}
		for _, in := range r.Inputs {
			host, start := "", ""
			if in.Provenance != nil {
				host, start = in.Provenance.Host, in.Provenance.Start
			}
			t.Rows = append(t.Rows, []string{in.File, count(in.Frames), fmt.Sprintf("%.3f", in.Seconds), host, start})
		}
		p.Tables = append(p.Tables, t)
	}
	p.Env = environment(nil, r.Provenance)
	return p
}

// lostNote says what a stream lost or had corrupted, if anything.
func lostNote(s recv.StreamResult) string {
	var parts []string
	if s.Lost > 0 {
		parts = append(parts, count(s.Lost)+" lost")
	}
	if s.Corrupted > 0 {
		parts = append(parts, count(s.Corrupted)+" corrupted")
	}
	return strings.Join(parts, ", ")
}

// matrixPage lays out a bench matrix: per size its ranking and rows.
func matrixPage(r *bench.Result) *page {
	p := &page{Title: "wpg bench: the matrix", Subtitle: subtitle(r.Schema, "", "", r.Provenance)}
	add := func(k, v string) { p.Summary = append(p.Summary, kv{k, v}) }
	add("runs", fmt.Sprintf("%d per cell, %.1f s each", r.Repeat, r.DurationSeconds))
	add("noise", r.Noise.Verdict+": "+r.Noise.Summary)
	if r.Interrupted {
		add("interrupted", "the tables hold the cells that finished")
	}
	p.Notes = r.Notes
	colours := map[bench.Group]string{bench.Reference: "#888888", bench.Local: palette[0], bench.Network: palette[2]}
	for ti, tb := range r.Tables {
		size := units.FormatSize(tb.Size)
		var bars []bar
		t := table{ID: "matrix-" + strconv.Itoa(ti), Title: size + " frames", Head: []string{"rank", "path", "group", "pps", "min – max", "spread", "rate", "ratio", "cpu ns/frame", "mode", "error"}, Text: map[int]bool{1: true, 2: true, 9: true, 10: true}}
		if ti == 0 {
			t.ID = "streams" // the matrix's rows stand where a run's streams do
		}
		for _, row := range tb.Rows {
			rate := si(row.BitsPerSecond, "bit/s")
			if row.Unit == "B/s" {
				rate = si(row.BytesPerSecond, "B/s")
			}
			ratio := ""
			if row.Ratio > 0 {
				ratio = fmt.Sprintf("%.2f× %s", row.Ratio, row.Reference)
			}
			t.Rows = append(t.Rows, []string{strconv.Itoa(row.Rank), row.Path, string(row.Group), si(row.PPS, ""), si(row.MinPPS, "") + " – " + si(row.MaxPPS, ""),
				fmt.Sprintf("%.1f %%", row.Spread*100), rate, ratio, fmt.Sprintf("%.1f", row.CPUNsPerFrame), row.Mode, row.Error})
			if row.Error == "" {
				bars = append(bars, bar{Label: row.Path, Value: row.PPS, Note: ratio, Colour: colours[row.Group]})
			}
		}
		p.Charts = append(p.Charts, barChart("ranking at "+size, "pps", bars))
		p.Tables = append(p.Tables, t)
	}
	if len(r.Skipped) > 0 {
		t := table{ID: "skipped", Title: "Not run here", Head: []string{"path", "size", "why"}, Text: map[int]bool{0: true, 1: true, 2: true}}
		for _, s := range r.Skipped {
			size := "every size"
			if s.Size > 0 {
				size = units.FormatSize(s.Size)
			}
			t.Rows = append(t.Rows, []string{s.Path, size, s.Reason})
		}
		p.Tables = append(p.Tables, t)
	}
	p.Env = environment(r.Environment, r.Provenance)
	return p
}

// ndrPage lays out an RFC 2544 throughput search.
func ndrPage(r *ndr.Report) *page {
	p := &page{Title: "wpg ndr: RFC 2544 throughput", Subtitle: r.Schema}
	add := func(k, v string) { p.Summary = append(p.Summary, kv{k, v}) }
	path := r.Sender + " → " + r.Receiver
	if r.Namespace != "" {
		path += " (namespace " + r.Namespace + ")"
	}
	add("path", r.Backend+", "+path)
	add("trials", fmt.Sprintf("%.1f s each, loss at most %g %%, resolution %g %%", r.Trial, r.Loss*100, r.Resolution*100))
	if r.Error != "" {
		add("error", r.Error)
	}
	layer := strings.ToUpper(cmp.Or(r.BPSLayer, "l1"))
	t := table{ID: "streams", Title: "Throughput per frame size", Head: []string{"size", "throughput", layer + " bit rate", "trials", "latency p99", "back-to-back"}}
	var bars []bar
	for _, s := range r.Sizes {
		bps := s.BPS
		if r.BPSLayer == "" {
			bps = s.ThroughputBPS // wpg.ndr/1 before bps_layer: l1
		}
		lat, b2b := "", ""
		if s.Latency != nil && s.Latency.Latency != nil {
			lat = ns(s.Latency.Latency.P99Ns)
		}
		if s.BackToBack != nil {
			b2b = fmt.Sprintf("%.0f frames", s.BackToBack.BurstFrames)
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(s.Size) + " B", si(s.ThroughputPPS, "pps"), si(bps, "bit/s"), strconv.Itoa(len(s.Trials)), lat, b2b})
		bars = append(bars, bar{Label: strconv.Itoa(s.Size) + " B", Value: s.ThroughputPPS, Note: si(bps, "bit/s")})
	}
	p.Charts = append(p.Charts, barChart("throughput per frame size", "pps", bars))
	p.Tables = append(p.Tables, t)
	return p
}
