package chart

import (
	"math"
	"strings"
	"time"

	"gonum.org/v1/plot"

	"github.com/wpg-dev/wpg/report"
)

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
