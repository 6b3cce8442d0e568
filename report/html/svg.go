package html

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"
)

// The charts are SVG drawn here, inline in the page: no script, no font
// or stylesheet to fetch, and no namespace declaration (HTML5 takes
// inline <svg> without one), so that the file names no URL at all.

// Chart geometry (SVG user units, scaled to the page's width by CSS).
const (
	chartW  = 760.0
	chartH  = 260.0
	marginL = 72.0
	marginR = 16.0
	marginT = 28.0
	marginB = 40.0
)

// palette colours the series of a chart, in order.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

// step is one interval of a series: a value held from X0 to X1.
type step struct {
	X0, X1, Y float64
}

// series is one line of a step chart.
type series struct {
	Name  string
	Steps []step
}

// stepChart draws series over time as steps (an interval's value held
// from its start to its end), with a dashed horizontal reference line at
// ref when it is above 0 (a target rate), the y axis in unit with SI
// prefixes.
func stepChart(title, unit string, ss []series, ref float64, refName string) template.HTML {
	var xmax, ymax float64
	for _, s := range ss {
		for _, p := range s.Steps {
			xmax = math.Max(xmax, p.X1)
			if !math.IsNaN(p.Y) {
				ymax = math.Max(ymax, p.Y)
			}
		}
	}
	ymax = math.Max(ymax, ref)
	if !(xmax > 0) {
		return ""
	}
	yt := niceTicks(0, ymax)
	xt := niceTicks(0, xmax)
	ytop, xtop := yt[len(yt)-1], xt[len(xt)-1]
	if !(ytop > 0) {
		ytop = 1
	}
	px := func(x float64) float64 { return marginL + (chartW-marginL-marginR)*x/xtop }
	py := func(y float64) float64 { return chartH - marginB - (chartH-marginT-marginB)*y/ytop }
	var b strings.Builder
	open(&b, title)
	axes(&b, xt, yt, px, py, func(v float64) string { return si(v, "") + " s" }, func(v float64) string { return si(v, unit) })
	for i, s := range ss {
		// A step whose Y is NaN (nothing measured) is a gap: the line
		// ends before it and starts again after.
		var pts []string
		line := func() {
			if len(pts) > 0 {
				fmt.Fprintf(&b, `<polyline class="line" fill="none" stroke="%s" stroke-width="2" points="%s"><title>%s</title></polyline>`,
					palette[i%len(palette)], strings.Join(pts, " "), template.HTMLEscapeString(s.Name))
			}
			pts = pts[:0]
		}
		for _, p := range s.Steps {
			if math.IsNaN(p.Y) {
				line()
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", px(p.X0), py(p.Y), px(p.X1), py(p.Y)))
		}
		line()
	}
	names := []string{}
	for _, s := range ss {
		names = append(names, s.Name)
	}
	if ref > 0 {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#555" stroke-dasharray="6 4"><title>%s</title></line>`,
			px(0), py(ref), px(xtop), py(ref), template.HTMLEscapeString(refName))
	}
	legend(&b, names, refName, ref > 0)
	b.WriteString("</svg>")
	return template.HTML(b.String())
}

// bar is one bar of a bar chart.
type bar struct {
	Label string
	Value float64
	// Note is written after the value (a ratio, a range).
	Note string
	// Colour is the bar's fill; empty: the palette's first.
	Colour string
}

// barChart draws horizontal bars, one per label, in unit.
func barChart(title, unit string, bars []bar) template.HTML {
	if len(bars) == 0 {
		return ""
	}
	var vmax float64
	for _, r := range bars {
		vmax = math.Max(vmax, r.Value)
	}
	row := 26.0
	h := marginT + row*float64(len(bars)) + marginB
	left := 180.0
	right := 170.0
	ticks := niceTicks(0, vmax)
	top := ticks[len(ticks)-1]
	if !(top > 0) {
		top = 1
	}
	px := func(v float64) float64 { return left + (chartW-left-right)*v/top }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`, chartW, h, template.HTMLEscapeString(title))
	fmt.Fprintf(&b, `<text class="title" x="%.0f" y="18">%s</text>`, chartW/2, template.HTMLEscapeString(title))
	base := h - marginB
	for _, t := range ticks {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="grid"/>`, px(t), marginT, px(t), base)
		fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, px(t), base+16, template.HTMLEscapeString(si(t, unit)))
	}
	for i, r := range bars {
		y := marginT + row*float64(i)
		colour := r.Colour
		if colour == "" {
			colour = palette[0]
		}
		fmt.Fprintf(&b, `<text class="label" x="%.1f" y="%.1f" text-anchor="end">%s</text>`, left-6, y+row/2+4, template.HTMLEscapeString(clip(r.Label, 26)))
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %s</title></rect>`,
			left, y+4, math.Max(px(r.Value)-left, 0), row-8, colour, template.HTMLEscapeString(r.Label), template.HTMLEscapeString(exact(r.Value, unit)))
		note := exact(r.Value, unit)
		if r.Note != "" {
			note += "  " + r.Note
		}
		fmt.Fprintf(&b, `<text class="value" x="%.1f" y="%.1f">%s</text>`, px(r.Value)+6, y+row/2+4, template.HTMLEscapeString(note))
	}
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="axis"/>`, left, marginT, left, base)
	b.WriteString("</svg>")
	return template.HTML(b.String())
}

// open starts a chart's <svg> with its title.
func open(b *strings.Builder, title string) {
	fmt.Fprintf(b, `<svg class="chart" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`, chartW, chartH, template.HTMLEscapeString(title))
	fmt.Fprintf(b, `<text class="title" x="%.0f" y="18">%s</text>`, chartW/2, template.HTMLEscapeString(title))
}

// axes draws the grid, the axes and their tick labels.
func axes(b *strings.Builder, xt, yt []float64, px, py func(float64) float64, xl, yl func(float64) string) {
	for _, t := range yt {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="grid"/>`, marginL, py(t), chartW-marginR, py(t))
		fmt.Fprintf(b, `<text class="tick" x="%.1f" y="%.1f" text-anchor="end">%s</text>`, marginL-6, py(t)+4, template.HTMLEscapeString(yl(t)))
	}
	for _, t := range xt {
		fmt.Fprintf(b, `<text class="tick" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, px(t), chartH-marginB+16, template.HTMLEscapeString(xl(t)))
	}
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="axis"/>`, marginL, chartH-marginB, chartW-marginR, chartH-marginB)
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="axis"/>`, marginL, marginT, marginL, chartH-marginB)
}

// legend names the series under the plot (none for a single series
// without a reference line).
func legend(b *strings.Builder, names []string, refName string, ref bool) {
	if len(names) < 2 && !ref {
		return
	}
	x := marginL
	y := chartH - 8
	for i, n := range names {
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="14" height="4" fill="%s"/>`, x, y-4, palette[i%len(palette)])
		fmt.Fprintf(b, `<text class="legend" x="%.1f" y="%.1f">%s</text>`, x+18, y, template.HTMLEscapeString(clip(n, 24)))
		x += 26 + 7*float64(len([]rune(clip(n, 24))))
	}
	if ref {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#555" stroke-dasharray="6 4"/>`, x, y-2, x+14, y-2)
		fmt.Fprintf(b, `<text class="legend" x="%.1f" y="%.1f">%s</text>`, x+18, y, template.HTMLEscapeString(refName))
	}
}

// niceTicks returns 3 to 7 round tick values from lo to at least hi.
func niceTicks(lo, hi float64) []float64 {
	if !(hi > lo) {
		return []float64{lo, lo + 1}
	}
	span := hi - lo
	step := math.Pow(10, math.Floor(math.Log10(span/5)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if span/(step*m) <= 6 {
			step *= m
			break
		}
	}
	var out []float64
	for v := lo; ; v += step {
		out = append(out, v)
		if v >= hi-step*1e-9 {
			break
		}
	}
	return out
}

// si formats v with an SI prefix and unit (12.5 M pps): for the charts'
// ticks and values; nanoseconds (unit "ns") are durations, to three
// significant digits (duration).
func si(v float64, unit string) string {
	if unit == "ns" {
		return duration(v)
	}
	abs := math.Abs(round3(v)) // 999.6 is 1 k, not 1e+03
	p, d := "", 1.0
	switch {
	case abs >= 1e12:
		p, d = "T", 1e12
	case abs >= 1e9:
		p, d = "G", 1e9
	case abs >= 1e6:
		p, d = "M", 1e6
	case abs >= 1e3:
		p, d = "k", 1e3
	}
	s := trimZeros(fmt.Sprintf("%.3g", v/d))
	if p == "" && unit == "" {
		return s
	}
	return strings.TrimSpace(s + " " + p + unit)
}

// duration writes ns nanoseconds at three significant digits as wpg
// writes a duration everywhere (Go's form, the text reports' and the
// page's tables': 20.5µs, 2ms, 0s), for the charts' ticks.
func duration(ns float64) string {
	r := round3(ns)
	if r != 0 && math.Abs(r) < 1 {
		return trimZeros(fmt.Sprintf("%.3g", r)) + "ns" // below Go's unit
	}
	return time.Duration(r).String()
}

// exact writes a value of unit as a table of the page does: a duration
// to the nanosecond (ns, 20.531µs), other figures as si: what a bar's
// label and tooltip say, the same as the table or summary beside it.
func exact(v float64, unit string) string {
	if unit == "ns" {
		return ns(int64(math.Round(v)))
	}
	return si(v, unit)
}

// round3 is v at the three significant digits si and duration write, so
// that they choose the prefix of what they write: 999.6 rounds to 1000.
func round3(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// trimZeros drops an exponent-free number's trailing zeros after the
// point ("2.50" → "2.5").
func trimZeros(s string) string {
	if strings.ContainsAny(s, "e") || !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// clip shortens s to n runes with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
