package server

import (
	"math"
	"strconv"
	"time"

	"github.com/wpg-dev/wpg/units"
)

func optTime(t *time.Time) string {
	if t == nil {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// Formatting for people.

func fmtRate(pps float64) string { return si(pps, "pps") }
func fmtBits(bps float64) string { return si(bps, "bit/s") }
func fmtBytes(n uint64) string   { return si(float64(n), "B") }

// siPrefixes are si's prefixes, largest first.
var siPrefixes = []struct {
	f float64
	p string
}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}}

// si writes v with three significant digits and an SI prefix. A value
// that rounds up to 1000 of a prefix is written with the next one (999.96
// pps is "1 kpps", not "1e+03 pps").
func si(v float64, unit string) string {
	a := math.Abs(v)
	for i, p := range siPrefixes {
		if a < p.f && i < len(siPrefixes)-1 {
			continue
		}
		s := strconv.FormatFloat(v/p.f, 'g', 3, 64)
		if n, _ := strconv.ParseFloat(s, 64); math.Abs(n) >= 1000 && i > 0 {
			p = siPrefixes[i-1]
			s = strconv.FormatFloat(v/p.f, 'g', 3, 64)
		}
		return s + " " + p.p + unit
	}
	return ""
}

func fmtCount(n uint64) string { return units.FormatCount(n, ",") }

func fmtSecs(s float64) string {
	if s <= 0 {
		return "–"
	}
	return (time.Duration(s * float64(time.Second))).Round(time.Millisecond).String()
}

func fmtNs(ns int64) string {
	if ns == 0 {
		return "–"
	}
	return time.Duration(ns).String()
}

// fmtLeft writes a time left to the second ("1m05s", "9s", "0s").
func fmtLeft(s float64) string {
	return time.Duration(math.Ceil(max(s, 0)) * float64(time.Second)).String()
}
