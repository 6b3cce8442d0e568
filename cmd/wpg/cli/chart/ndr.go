package chart

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg/draw"

	"github.com/wpg-dev/wpg/ndr"
)

// ndrPlots draws an RFC 2544 report (wpg ndr --json): the throughput per
// frame size, and where the tests ran, the latency at the throughput
// (min, p50, p99, max) and the back-to-back burst per size.
func ndrPlots(r *ndr.Report) ([]*plot.Plot, error) {
	if len(r.Sizes) == 0 {
		return nil, errors.New("nothing to draw: the ndr report has no sizes (interrupted before the first search ended?)")
	}
	sizes := make([]string, len(r.Sizes))
	for i, s := range r.Sizes {
		sizes[i] = strconv.Itoa(s.Size) + " B"
	}
	where := r.Sender + " → " + r.Receiver
	var out []*plot.Plot
	tp := make(plotter.XYs, len(r.Sizes))
	for i, s := range r.Sizes {
		tp[i] = plotter.XY{X: float64(i), Y: s.ThroughputPPS}
	}
	p, err := sizePanel("wpg ndr "+where+": throughput (RFC 2544 26.1)", "frames/s", sizes, []sizeLine{{"throughput", tp}}, false)
	if err != nil {
		return nil, err
	}
	out = append(out, p)
	var lat []sizeLine
	for _, q := range []struct {
		name string
		of   func(ndr.SizeResult) int64
	}{
		{"min", func(s ndr.SizeResult) int64 { return s.Latency.Latency.MinNs }},
		{"p50", func(s ndr.SizeResult) int64 { return s.Latency.Latency.P50Ns }},
		{"p99", func(s ndr.SizeResult) int64 { return s.Latency.Latency.P99Ns }},
		{"max", func(s ndr.SizeResult) int64 { return s.Latency.Latency.MaxNs }},
	} {
		var xys plotter.XYs
		for i, s := range r.Sizes {
			if s.Latency != nil && s.Latency.Latency != nil {
				xys = append(xys, plotter.XY{X: float64(i), Y: math.Max(float64(q.of(s))/1e3, 0.001)})
			}
		}
		if len(xys) > 0 {
			lat = append(lat, sizeLine{q.name, xys})
		}
	}
	if len(lat) > 0 {
		p, err := sizePanel("latency at the throughput (RFC 2544 26.2)", "µs (log scale)", sizes, lat, true)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	var b2b plotter.XYs
	for i, s := range r.Sizes {
		if s.BackToBack != nil {
			b2b = append(b2b, plotter.XY{X: float64(i), Y: s.BackToBack.BurstFrames})
		}
	}
	if len(b2b) > 0 {
		p, err := sizePanel("back-to-back frames: the longest burst without loss (RFC 2544 26.4)", "frames", sizes, []sizeLine{{"burst", b2b}}, false)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// sizeLine is one line of a panel over the frame sizes.
type sizeLine struct {
	name string
	xys  plotter.XYs
}

// sizePanel draws lines over the frame sizes (the x axis names them),
// on a logarithmic y axis when log is set.
func sizePanel(title, ylabel string, sizes []string, lines []sizeLine, log bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	for i, l := range lines {
		line, points, err := plotter.NewLinePoints(l.xys)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", title, err)
		}
		line.Color = plotutil.Color(i)
		points.Color = plotutil.Color(i)
		points.Shape = draw.CircleGlyph{}
		p.Add(line, points)
		if len(lines) > 1 {
			p.Legend.Add(l.name, line, points)
		}
	}
	p.NominalX(sizes...)
	if log {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	} else {
		p.Y.Min = 0
		p.Y.Tick.Marker = siTicks{}
	}
	p.Legend.Top, p.Legend.Left = true, true
	return p, nil
}
