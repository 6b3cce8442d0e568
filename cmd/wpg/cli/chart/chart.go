// Package chart draws wpg's reports (`wpg plot`): a run over time from
// its intervals (rate, loss, latency p99, lateness p99), the lateness
// (send) or one-way latency (recv) distribution by percentile, and for a matrix (wpg bench without
// --backend) a bar chart of each size's ranking. It reads the JSON a
// report was written as, so a picture can be drawn long after the run, on
// another machine. Pictures are SVG or PNG (gonum.org/v1/plot).
package chart

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/wpg-dev/wpg/bench"
	"github.com/wpg-dev/wpg/ndr"
	"github.com/wpg-dev/wpg/recv"
	"github.com/wpg-dev/wpg/report"
	"github.com/wpg-dev/wpg/units"
)

// formats are the picture formats Render writes.
var formats = []string{"svg", "png"}

// Width and PanelHeight are the size of a picture and of each of its
// panels.
const (
	Width       = 8 * vg.Inch
	PanelHeight = 3.5 * vg.Inch
)

// MaxInput bounds the report Plots reads.
const MaxInput = 64 << 20

// Plots builds the panels for the report document b: a matrix
// (wpg.bench/v1) gives one ranking per size, and with intervals each
// path's run over time; a send or bench report (wpg.report/v1 and v2) its run
// over time (Timeline), when paced its lateness and with its own receiver
// the receiver's latency; a receiver's (wpg.recv/v1) its run over time
// and its latency; an RFC 2544 report (wpg.ndr/1) the throughput, latency
// and back-to-back burst per frame size. A report with nothing to draw is an error
// that says which flag gives it.
func Plots(b []byte) ([]*plot.Plot, error) {
	if len(b) > MaxInput {
		return nil, fmt.Errorf("report of %d bytes: at most %d", len(b), MaxInput)
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errors.New("the file is empty: give the JSON that wpg bench, send or recv --json wrote")
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("not a wpg JSON report: %w", jsonError(b, err))
	}
	switch head.Schema {
	case bench.Schema:
		var r bench.Result
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("matrix report: %w", jsonError(b, err))
		}
		return matrixPlots(&r)
	case report.Schema, "wpg.report/v1": // v2 added fields only (a merge's)
		var r report.Report
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("report: %w", jsonError(b, err))
		}
		return runPlots(&r)
	case "wpg.recv/v1":
		var r recvDoc
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("receiver report: %w", jsonError(b, err))
		}
		return recvPlots(&r)
	case ndr.Schema:
		var r ndr.Report
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("ndr report: %w", jsonError(b, err))
		}
		return ndrPlots(&r) // ndr.go
	case "":
		return nil, errors.New("no \"schema\" field: give the JSON of wpg bench, send, recv or ndr --json")
	}
	return nil, fmt.Errorf("schema %q: wpg plot draws %s, %s, wpg.recv/v1 and %s", head.Schema, bench.Schema, report.Schema, ndr.Schema)
}

// jsonError says where in b the JSON decoding failed (line:column) and
// what was wrong in the report's own terms: a syntax error, the document
// ending early, or a field of the wrong type named by its JSON path, not
// by the Go type it was to fill.
func jsonError(b []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(b, syn.Offset)
		if syn.Offset >= int64(len(b)) || strings.Contains(syn.Error(), "unexpected end") {
			return fmt.Errorf("line %d, column %d: the JSON ends early (was the file cut short?)", line, col)
		}
		return fmt.Errorf("line %d, column %d: %s", line, col, strings.TrimPrefix(syn.Error(), "json: "))
	case errors.As(err, &typ):
		line, col := lineCol(b, valueStart(b, typ.Offset))
		if typ.Field == "" {
			return fmt.Errorf("line %d, column %d: the document is a JSON %s: a wpg report is an object with a \"schema\" field", line, col, typ.Value)
		}
		return fmt.Errorf("line %d, column %d: field %q is a JSON %s: want %s", line, col, typ.Field, typ.Value, jsonKind(typ.Type.Kind().String()))
	}
	return err
}

// jsonKind names a Go kind as the JSON value that fills it.
func jsonKind(k string) string {
	switch {
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"), strings.HasPrefix(k, "float"):
		return "a number"
	case k == "string":
		return "a string"
	case k == "bool":
		return "true or false"
	case k == "slice", k == "array":
		return "an array"
	}
	return "an object"
}

// valueStart is where the JSON value that ends at off begins (the
// decoder reports a type error after the value).
func valueStart(b []byte, off int64) int64 {
	off = min(max(off, 0), int64(len(b)))
	if off == 0 {
		return 0
	}
	switch c := b[off-1]; {
	case c == '[' || c == '{':
		return off - 1
	case c == '"':
		for i := off - 2; i >= 0; i-- {
			if b[i] == '"' && (i == 0 || b[i-1] != '\\') {
				return i
			}
		}
		return 0
	}
	i := off
	for i > 0 && !strings.ContainsRune(",:[{ \t\r\n", rune(b[i-1])) {
		i--
	}
	return i
}

// lineCol turns a byte offset of b into a 1-based line and column.
func lineCol(b []byte, off int64) (int, int) {
	off = min(max(off, 0), int64(len(b)))
	head := b[:off]
	line := 1 + bytes.Count(head, []byte("\n"))
	col := int(off) - (bytes.LastIndexByte(head, '\n') + 1) + 1
	return line, col
}

// recvDoc is the part of `wpg recv --json` a picture needs.
type recvDoc struct {
	Frames     uint64             `json:"frames"`
	Lost       uint64             `json:"lost"`
	Intervals  []report.Interval  `json:"intervals"`
	Latency    *recv.Latency      `json:"latency"`
	Provenance *report.Provenance `json:"provenance"`
}

func matrixPlots(r *bench.Result) ([]*plot.Plot, error) {
	var out []*plot.Plot
	for _, t := range r.Tables {
		p, err := Ranking(t)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
		// With --interval, each path's run over time (the run nearest
		// the row's median, the one its rate is).
		var series []Series
		for _, row := range t.Rows {
			best := -1
			for i, run := range row.Runs {
				if len(run.Intervals) > 0 && (best < 0 || math.Abs(run.PPS-row.PPS) < math.Abs(row.Runs[best].PPS-row.PPS)) {
					best = i
				}
			}
			if best >= 0 {
				series = append(series, Series{Name: row.Path, Intervals: row.Runs[best].Intervals})
			}
		}
		if len(series) > 0 {
			ps, err := Timeline("wpg bench, "+units.FormatSize(t.Size)+" frames", series)
			if err != nil {
				return nil, err
			}
			out = append(out, ps...)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("the matrix report has no tables (every row skipped or interrupted)")
	}
	return out, nil
}

func runPlots(r *report.Report) ([]*plot.Plot, error) {
	var out []*plot.Plot
	title := "wpg " + r.Command + " " + r.Backend.Backend
	if len(r.Intervals) > 0 {
		ps, err := Timeline(title, []Series{{Intervals: r.Intervals}})
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	if r.LatenessMaxNs > 0 {
		p, err := Percentiles(title+": lateness of the pacer's grants", []Point{
			{"p50", float64(r.P50JitterNs)}, {"p99", float64(r.P99JitterNs)}, {"max", float64(r.LatenessMaxNs)},
		})
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(r.Verification) > 0 {
		// The sender's own receiver (--verify): its one-way latency.
		var v recvDoc
		if err := json.Unmarshal(r.Verification, &v); err == nil && v.Latency != nil {
			p, err := latencyPercentiles(title+": the receiver's one-way latency", v.Latency)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("nothing to draw: the report has no intervals (run with --interval 1s) and no lateness (a paced run: --rate)")
	}
	return out, nil
}

func recvPlots(r *recvDoc) ([]*plot.Plot, error) {
	var out []*plot.Plot
	if len(r.Intervals) > 0 {
		ps, err := Timeline("wpg recv", []Series{{Intervals: r.Intervals}})
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	if l := r.Latency; l != nil {
		p, err := latencyPercentiles("wpg recv: one-way latency", l)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, errors.New("nothing to draw: the receiver's report has no intervals (run wpg recv with --interval 1s) and no latency")
	}
	return out, nil
}

func latencyPercentiles(title string, l *recv.Latency) (*plot.Plot, error) {
	return Percentiles(title, []Point{
		{"min", float64(l.MinNs)}, {"p50", float64(l.P50Ns)}, {"p99", float64(l.P99Ns)}, {"p99.9", float64(l.P999Ns)}, {"max", float64(l.MaxNs)},
	})
}

// Group colours of the ranking's bars.
var groupColor = map[bench.Group]color.Color{
	bench.Reference: color.RGBA{R: 0x88, G: 0x88, B: 0x88, A: 0xff},
	bench.Local:     color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	bench.Network:   color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
}

// whiskers are the min–max ranges of the rows (XYer and XErrorer).
type whiskers struct {
	plotter.XYs
	plotter.XErrors
}

// Ranking draws one size of a matrix: a horizontal bar per path, fastest
// on top, the length its median frame rate, a whisker its min–max over
// the repeats, the colour its group (grey references, blue local paths,
// green network paths), labelled with its ratio to the reference.
func Ranking(t bench.Table) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "wpg bench: " + units.FormatSize(t.Size) + " frames (median frames/s, min–max)"
	p.X.Label.Text = "frames/s"
	n := len(t.Rows)
	names := make([]string, n)
	per := map[bench.Group]plotter.Values{}
	var wh whiskers
	for i, r := range t.Rows {
		// Fastest on top: the y axis counts from the bottom.
		j := n - 1 - i
		if per[r.Group] == nil {
			per[r.Group] = make(plotter.Values, n)
		}
		per[r.Group][j] = r.PPS
		label := r.Path
		switch {
		case r.Group == bench.Reference:
			label += " (reference)"
		case r.Ratio > 0:
			label += fmt.Sprintf(" (%.2f× %s)", r.Ratio, r.Reference)
		}
		names[j] = label
		if len(r.Runs) > 1 {
			wh.XYs = append(wh.XYs, plotter.XY{X: r.PPS, Y: float64(j)})
			wh.XErrors = append(wh.XErrors, struct{ Low, High float64 }{r.PPS - r.MinPPS, r.MaxPPS - r.PPS})
		}
	}
	for _, g := range []bench.Group{bench.Reference, bench.Local, bench.Network} {
		vals := per[g]
		if vals == nil {
			continue
		}
		bars, err := plotter.NewBarChart(vals, vg.Points(12))
		if err != nil {
			return nil, fmt.Errorf("ranking at %s: %w", units.FormatSize(t.Size), err)
		}
		bars.Horizontal = true
		bars.Color = groupColor[g]
		bars.LineStyle.Width = 0
		p.Add(bars)
		p.Legend.Add(string(g), bars)
	}
	if len(wh.XYs) > 0 {
		eb, err := plotter.NewXErrorBars(wh)
		if err != nil {
			return nil, fmt.Errorf("ranking at %s: %w", units.FormatSize(t.Size), err)
		}
		p.Add(eb)
	}
	p.NominalY(names...)
	p.X.Min = 0
	p.X.Tick.Marker = siTicks{}
	p.Legend.Top = false
	p.Legend.Left = false
	return p, nil
}

// Series is one run's intervals; Name tells it apart in a legend when a
// panel draws more than one (a matrix's paths).
type Series struct {
	Name      string
	Intervals []report.Interval
}

// Timeline draws runs over time from their intervals, a panel per figure
// the intervals carry: the frame rate always; the frames lost per second
// when a receiver counted loss (recv, and send or bench with their own
// receivers), with the corrupted ones when any were; the receiver's
// one-way latency p99 when it measured one; the lateness p99 of the
// pacer's grants in a paced run (--rate). A panel is left out when no
// series carries its figure. A last interval shorter than a quarter of
// the one before (the run ended just after a sample) is left out of the
// picture; its frames stay in the report.
func Timeline(title string, series []Series) ([]*plot.Plot, error) {
	if len(series) == 0 {
		return nil, errors.New("timeline: no runs")
	}
	named := len(series) > 1
	var rate, lost, corrupted, latency, lateness []line
	for _, s := range series {
		ivs := s.Intervals
		if n := len(ivs); n > 1 && ivs[n-1].End-ivs[n-1].Start < (ivs[n-2].End-ivs[n-2].Start)/4 {
			ivs = ivs[:n-1]
		}
		r := line{name: s.Name}
		l, c, lat, late := line{name: s.Name}, line{name: s.Name}, line{name: s.Name}, line{name: s.Name}
		anyCorrupt := false
		for _, in := range ivs {
			dt := math.Max(in.End-in.Start, 1e-9)
			r.step(in, in.PPS)
			if in.Lost != nil {
				l.step(in, float64(*in.Lost)/dt)
			}
			if in.Corrupted != nil {
				c.step(in, float64(*in.Corrupted)/dt)
				anyCorrupt = anyCorrupt || *in.Corrupted > 0
			}
			if in.LatencyP99Ns > 0 {
				lat.step(in, float64(in.LatencyP99Ns))
			}
			if in.LatenessP99Ns > 0 {
				late.step(in, float64(in.LatenessP99Ns))
			}
		}
		rate = append(rate, r)
		if len(l.segs) > 0 {
			lost = append(lost, l)
		}
		if anyCorrupt {
			corrupted = append(corrupted, c)
		}
		if len(lat.segs) > 0 {
			latency = append(latency, lat)
		}
		if len(late.segs) > 0 {
			lateness = append(lateness, late)
		}
	}
	var out []*plot.Plot
	p, err := panel(title+": rate", "frames/s", rate, nil, "", named, siTicks{})
	if err != nil {
		return nil, err
	}
	out = append(out, p)
	if len(lost) > 0 {
		t := title + ": frames lost per second"
		if len(corrupted) > 0 {
			t = title + ": frames lost and corrupted per second"
		}
		p, err := panel(t, "frames/s", lost, corrupted, "corrupted", named, siTicks{})
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(latency) > 0 {
		p, err := panel(title+": the receiver's one-way latency p99 per interval", "latency p99", latency, nil, "", named, durTicks{})
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(lateness) > 0 {
		p, err := panel(title+": lateness p99 of the pacer's grants per interval", "lateness p99", lateness, nil, "", named, durTicks{})
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// line is one series of a timeline panel: a step per interval, in
// segments broken where an interval had no value (a latency not yet
// measured), instead of a slope across the gap.
type line struct {
	name string
	segs []plotter.XYs
}

// step adds the interval's value from its start to its end.
func (l *line) step(in report.Interval, v float64) {
	if n := len(l.segs); n == 0 || l.segs[n-1][len(l.segs[n-1])-1].X != in.Start {
		l.segs = append(l.segs, nil)
	}
	n := len(l.segs) - 1
	l.segs[n] = append(l.segs[n], plotter.XY{X: in.Start, Y: v}, plotter.XY{X: in.End, Y: v})
}

// panel draws lines (and, dashed, extra: a second figure of the same
// series, named by suffix) over time. A legend names the series when
// there are several, or when extra is drawn too.
func panel(title, ylabel string, lines, extra []line, suffix string, named bool, ticks plot.Ticker) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "seconds"
	p.Y.Label.Text = ylabel
	lo, hi := 0.0, 0.0
	legend := named || len(extra) > 0
	add := func(l line, i int, dashed bool, name string) error {
		for j, seg := range l.segs {
			pl, err := plotter.NewLine(seg)
			if err != nil {
				return fmt.Errorf("%s: %w", title, err)
			}
			pl.Color = plotutil.Color(i)
			if dashed {
				pl.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
			}
			p.Add(pl)
			if legend && j == 0 {
				p.Legend.Add(name, pl)
			}
			for _, pt := range seg {
				lo, hi = math.Min(lo, pt.Y), math.Max(hi, pt.Y)
			}
		}
		return nil
	}
	for i, l := range lines {
		name := l.name
		if len(extra) > 0 {
			name = strings.TrimSpace(l.name + " lost")
		}
		if err := add(l, i, false, name); err != nil {
			return nil, err
		}
	}
	for i, l := range extra {
		if err := add(l, i, true, strings.TrimSpace(l.name+" "+suffix)); err != nil {
			return nil, err
		}
	}
	p.Legend.Top = true
	p.X.Min = 0  // every panel from the run's start, though its first interval has no latency yet
	p.Y.Min = lo // 0, or below it: a late frame fills a gap an earlier interval counted as lost
	if hi > 0 {
		// Headroom above the highest point, so that the line does not run
		// along the frame and the legend sits clear of it.
		p.Y.Max = hi * 1.25
	} else {
		p.Y.Max = 1 // all zero: no loss, drawn as a line along the floor
	}
	p.Y.Tick.Marker = ticks
	return p, nil
}

// Point is one percentile of a distribution, in nanoseconds.
type Point struct {
	Label string
	Ns    float64
}

// Percentiles draws a distribution by its percentiles: a point per
// percentile, joined, on a logarithmic scale of microseconds (lateness
// and latency spread over orders of magnitude).
func Percentiles(title string, pts []Point) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "µs (log scale)"
	xys := make(plotter.XYs, len(pts))
	names := make([]string, len(pts))
	for i, pt := range pts {
		xys[i] = plotter.XY{X: float64(i), Y: math.Max(pt.Ns/1e3, 0.001)} // a log scale has no 0
		names[i] = fmt.Sprintf("%s %s", pt.Label, roundDur(pt.Ns))
	}
	line, points, err := plotter.NewLinePoints(xys)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", title, err)
	}
	points.Shape = draw.CircleGlyph{}
	p.Add(line, points)
	p.NominalX(names...)
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	return p, nil
}

// Render draws plots stacked into one picture of the format ("svg",
// "png") and writes it to w.
func Render(w io.Writer, format string, plots []*plot.Plot) error {
	format = strings.ToLower(format)
	ok := false
	for _, f := range formats {
		ok = ok || f == format
	}
	if !ok {
		return fmt.Errorf("picture format %q: give a file name ending in .svg or .png", format)
	}
	if len(plots) == 0 {
		return errors.New("nothing to draw")
	}
	c, err := draw.NewFormattedCanvas(Width, PanelHeight*vg.Length(len(plots)), format)
	if err != nil {
		return err
	}
	grid := make([][]*plot.Plot, len(plots))
	for i, p := range plots {
		grid[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadX: vg.Millimeter, PadY: 4 * vg.Millimeter, PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	canvases := plot.Align(grid, tiles, draw.New(c))
	for i, p := range plots {
		p.Draw(canvases[i][0])
	}
	_, err = c.WriteTo(w)
	return err
}

// siTicks labels the default ticks with SI prefixes (12 M, not 12000000).
type siTicks struct{}

// Ticks implements plot.Ticker.
func (siTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = tickLabel(ts[i].Value)
		}
	}
	return ts
}

// roundDur writes ns as a duration to three significant digits (1.57ms,
// not 1.569791ms): a label, not a measurement.
func roundDur(ns float64) string {
	d := time.Duration(math.Round(ns))
	unit := time.Duration(1)
	for d/unit >= 1000 {
		unit *= 10
	}
	return d.Round(unit).String()
}

// durTicks labels the default ticks of a scale of nanoseconds as
// durations (2ms, 500µs).
type durTicks struct{}

// Ticks implements plot.Ticker.
func (durTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = report.Dur(int64(math.Round(ts[i].Value)))
		}
	}
	return ts
}

// tickLabel is report.SI without the trailing zeros a round tick value
// gets ("30 M", "2.5 k", "0", not "30.000 M", "2.500 k", "0.0").
func tickLabel(v float64) string {
	s := report.SI(v, "")
	num, prefix, _ := strings.Cut(s, " ")
	if strings.Contains(num, ".") {
		num = strings.TrimRight(strings.TrimRight(num, "0"), ".")
	}
	if prefix == "" {
		return num
	}
	return num + " " + prefix
}
