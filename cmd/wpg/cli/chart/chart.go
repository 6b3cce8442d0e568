// Package chart draws wpg's reports (`wpg plot`): a run over time from
// its intervals (rate, loss, latency p99, lateness p99), the lateness
// (send) or one-way latency (recv) distribution by percentile, and for a matrix (wpg bench without
// --backend) a bar chart of each size's ranking. It reads the JSON a
// report was written as, so a picture can be drawn long after the run, on
// another machine. Pictures are SVG or PNG (gonum.org/v1/plot).
package chart

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/wpg-dev/wpg/bench"
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
	var ls timelines
	for _, s := range series {
		ls.add(s)
	}
	return ls.panels(title, len(series) > 1)
}

// timelines are the lines of a Timeline's panels, one per series in each
// panel that series has something for.
type timelines struct {
	rate, lost, corrupted, latency, lateness []line
}

// add adds the lines of series s: its rate, and its loss, corruption,
// latency p99 and lateness p99 where its intervals carry them. A last
// interval under a quarter of the one before is left out (a rate over
// a sliver of time says nothing).
func (t *timelines) add(s Series) {
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
	t.rate = append(t.rate, r)
	if len(l.segs) > 0 {
		t.lost = append(t.lost, l)
	}
	if anyCorrupt {
		t.corrupted = append(t.corrupted, c)
	}
	if len(lat.segs) > 0 {
		t.latency = append(t.latency, lat)
	}
	if len(late.segs) > 0 {
		t.lateness = append(t.lateness, late)
	}
}

// panels draws the rate panel, and the loss, latency and lateness panels
// that have lines (named: a legend names the series).
func (t *timelines) panels(title string, named bool) ([]*plot.Plot, error) {
	var out []*plot.Plot
	p, err := panel(title+": rate", "frames/s", t.rate, nil, "", named, siTicks{})
	if err != nil {
		return nil, err
	}
	out = append(out, p)
	if len(t.lost) > 0 {
		pt := title + ": frames lost per second"
		if len(t.corrupted) > 0 {
			pt = title + ": frames lost and corrupted per second"
		}
		p, err := panel(pt, "frames/s", t.lost, t.corrupted, "corrupted", named, siTicks{})
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(t.latency) > 0 {
		p, err := panel(title+": the receiver's one-way latency p99 per interval", "latency p99", t.latency, nil, "", named, durTicks{})
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(t.lateness) > 0 {
		p, err := panel(title+": lateness p99 of the pacer's grants per interval", "lateness p99", t.lateness, nil, "", named, durTicks{})
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
