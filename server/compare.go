package server

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/wpg-dev/wpg/report"
)

// MaxCompare caps the jobs of one compare page.
const MaxCompare = 8

// compareRow is one line of the compare table: a label and a cell per
// job.
type compareRow struct {
	Label string
	Cells []compareCell
}

// compareCell is one job's value of a row and, for a figure, how far it
// is from the first job's: Delta in per cent ("+12.5 %", "±0 %"), or the
// difference itself in the row's unit where a per cent would say nothing
// (the first job's figure is 0, or the other is more than 11 times it:
// "+5", "+11.9 Mpps"); "" for the first job, for words, where either
// figure is missing and where both are 0. Trend "better" or "worse" where
// the row says which way is better.
type compareCell struct {
	Value string
	Delta string
	Trend string
}

// Which way a figure of the compare table is better.
const (
	neither = 0
	higher  = 1
	lower   = -1
)

// compareFig is one job's figure of a row: its value, as shown, and the
// number behind it; ok false where the job has none ("–"). diff writes a
// difference of two figures of the row, at least 0, in its unit.
type compareFig struct {
	text string
	v    float64
	ok   bool
	diff func(float64) string
}

// maxDelta is the largest distance the compare table writes in per cent:
// beyond it (a figure more than 11 times the first job's, often one near
// 0: "+11865885 %") it writes the difference itself.
const maxDelta = 1000

// delta writes how far x is from base in per cent, or by diff the
// difference itself where base is 0 or the per cent would be above
// maxDelta, with the trend of a row whose better direction is better
// (neither, higher, lower).
func delta(base, x float64, better int, diff func(float64) string) (string, string) {
	if x == base {
		if base == 0 {
			return "", ""
		}
		return "±0 %", ""
	}
	var text string
	d := math.Inf(1)
	if base != 0 {
		d = (x - base) / math.Abs(base) * 100
	}
	switch a := math.Abs(d); {
	case a > maxDelta:
		sign := "+"
		if x < base {
			sign = "-"
		}
		text = sign + diff(math.Abs(x-base))
	case a < 0.05:
		text = fmt.Sprintf("%+.2f %%", d)
	default:
		text = fmt.Sprintf("%+.1f %%", d)
	}
	trend := ""
	if better != neither {
		trend = "worse"
		if (x > base) == (better == higher) {
			trend = "better"
		}
	}
	return text, trend
}

// rxFigures are what a job's receiver counted, from its report's
// verification (recv.Result's fields).
type rxFigures struct {
	Frames     uint64 `json:"frames"`
	Lost       uint64 `json:"lost"`
	Duplicated uint64 `json:"duplicated"`
	Reordered  uint64 `json:"reordered"`
	Corrupted  uint64 `json:"corrupted"`
	Latency    *struct {
		Samples uint64 `json:"samples"`
		P50Ns   int64  `json:"p50_ns"`
		P99Ns   int64  `json:"p99_ns"`
		MaxNs   int64  `json:"max_ns"`
	} `json:"latency"`
	JitterNs int64 `json:"jitter_ns"`
}

// rxOf reads a report's verification; nil without one.
func rxOf(r *report.Report) *rxFigures {
	if r == nil || len(r.Verification) == 0 {
		return nil
	}
	var rx rxFigures
	if json.Unmarshal(r.Verification, &rx) != nil {
		return nil
	}
	return &rx
}

type comparePage struct {
	Jobs []JobView
	// Baseline is the job the deltas are taken from: the first.
	Baseline int64
	// Latency is true when a job's samples carry its receiver's latency.
	Latency bool
	Rows    []compareRow
	Charts  []chartData
	Error   string
}

func (s *Server) handleComparePage(w http.ResponseWriter, r *http.Request) {
	var ids []int64
	for _, v := range r.URL.Query()["id"] {
		for _, part := range strings.Split(v, ",") {
			id, ok := parseID(strings.TrimSpace(part))
			if !ok {
				s.render(w, http.StatusBadRequest, "error", "Compare", fmt.Sprintf("“%s” is not a job ID: give ?id=1&id=2 (whole numbers from 1)", part))
				return
			}
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	var d comparePage
	switch {
	case len(ids) < 2:
		d.Error = "pick two or more finished jobs on the jobs page to compare them"
		s.render(w, http.StatusOK, "compare", "Compare", d)
		return
	case len(ids) > MaxCompare:
		d.Error = fmt.Sprintf("%d jobs picked: compare at most %d at once", len(ids), MaxCompare)
		ids = ids[:MaxCompare]
	}
	var reps []*report.Report
	for _, id := range ids {
		rec, err := s.store.Get(r.Context(), id)
		if err != nil {
			s.render(w, http.StatusInternalServerError, "error", "Job database", "job database: "+err.Error())
			return
		}
		if rec == nil {
			s.render(w, http.StatusNotFound, "error", "No such job", fmt.Sprintf("there is no job %d to compare", id))
			return
		}
		var v JobView
		if e := s.lookup(id); e != nil && rec.Status == StatusRunning {
			v = s.view(e, nil)
		} else {
			v = s.view(nil, rec)
		}
		var rep *report.Report
		if rec.Report != nil {
			rep = &report.Report{}
			if json.Unmarshal(rec.Report, rep) != nil {
				rep = nil
			}
		}
		xs, err := s.store.Samples(r.Context(), id)
		if err != nil {
			d.Error = "job database: " + err.Error()
		}
		d.Jobs = append(d.Jobs, v)
		reps = append(reps, rep)
		d.Charts = append(d.Charts, chartData{ID: id, Name: v.Name, Samples: thin(xs)})
		for _, x := range xs {
			d.Latency = d.Latency || x.LatencyP99Ns > 0
		}
	}
	rxs := make([]*rxFigures, len(reps))
	anyRx := false
	for i, r := range reps {
		rxs[i] = rxOf(r)
		anyRx = anyRx || rxs[i] != nil
	}
	// word is a row of words; figure a row of numbers, each job's with its
	// distance from the first job's.
	word := func(label string, f func(v JobView, r *report.Report) string) {
		cr := compareRow{Label: label}
		for i, v := range d.Jobs {
			cr.Cells = append(cr.Cells, compareCell{Value: f(v, reps[i])})
		}
		d.Rows = append(d.Rows, cr)
	}
	figure := func(label string, better int, f func(i int) compareFig) {
		cr := compareRow{Label: label}
		base := f(0)
		for i := range d.Jobs {
			x := f(i)
			c := compareCell{Value: x.text}
			if !x.ok {
				c.Value = "–"
			} else if i > 0 && base.ok {
				c.Delta, c.Trend = delta(base.v, x.v, better, x.diff)
			}
			cr.Cells = append(cr.Cells, c)
		}
		d.Rows = append(d.Rows, cr)
	}
	rep := func(f func(r *report.Report) compareFig) func(int) compareFig {
		return func(i int) compareFig {
			if reps[i] == nil {
				return compareFig{}
			}
			return f(reps[i])
		}
	}
	rx := func(f func(x *rxFigures) compareFig) func(int) compareFig {
		return func(i int) compareFig {
			if rxs[i] == nil {
				return compareFig{}
			}
			return f(rxs[i])
		}
	}
	// num is a figure v, written by format, which writes the row's
	// differences too.
	num := func(v float64, format func(float64) string) compareFig {
		return compareFig{text: format(v), v: v, ok: true, diff: format}
	}
	count := func(n uint64) compareFig {
		return num(float64(n), func(d float64) string { return fmtCount(uint64(math.Round(d))) })
	}
	ns := func(n int64) compareFig {
		if n == 0 {
			return compareFig{}
		}
		return num(float64(n), func(d float64) string { return fmtNs(int64(math.Round(d))) })
	}
	word("status", func(v JobView, _ *report.Report) string { return string(v.Status) })
	word("backend", func(v JobView, _ *report.Report) string { return v.Backend })
	word("started", func(v JobView, _ *report.Report) string { return v.StartedAt.Format("2006-01-02 15:04:05Z") })
	word("started by", func(v JobView, _ *report.Report) string { return orDash(v.StartedBy) })
	word("target rate", func(_ JobView, r *report.Report) string {
		if r == nil {
			return "–"
		}
		return orDash(r.Rate)
	})
	figure("frames", neither, func(i int) compareFig { return count(d.Jobs[i].Frames) })
	figure("seconds", neither, func(i int) compareFig {
		if v := d.Jobs[i].Elapsed; v > 0 {
			return num(v, fmtSecs)
		}
		return compareFig{}
	})
	figure("rate", neither, func(i int) compareFig { return num(d.Jobs[i].PPS, fmtRate) })
	figure("bit rate", neither, func(i int) compareFig { return num(d.Jobs[i].BPS, fmtBits) })
	figure("achieved ratio", higher, rep(func(r *report.Report) compareFig {
		if r.Rate == "" {
			return compareFig{}
		}
		return num(r.AchievedRatio, func(d float64) string { return fmt.Sprintf("%.4f", d) })
	}))
	figure("lateness p50", lower, rep(func(r *report.Report) compareFig { return ns(r.LatenessP50Ns) }))
	figure("lateness p99", lower, rep(func(r *report.Report) compareFig { return ns(r.LatenessP99Ns) }))
	figure("lateness max", lower, rep(func(r *report.Report) compareFig { return ns(r.LatenessMaxNs) }))
	if anyRx {
		figure("received", neither, rx(func(x *rxFigures) compareFig { return count(x.Frames) }))
		figure("lost", lower, rx(func(x *rxFigures) compareFig { return count(x.Lost) }))
		figure("loss", lower, func(i int) compareFig {
			x := rxs[i]
			if x == nil || x.Frames+x.Lost == 0 {
				return compareFig{}
			}
			p := float64(x.Lost) / float64(x.Frames+x.Lost) * 100
			// A share in per cent; its differences in percentage points.
			return compareFig{text: strconv.FormatFloat(p, 'g', 3, 64) + " %", v: p, ok: true, diff: func(d float64) string { return strconv.FormatFloat(d, 'g', 3, 64) + " pp" }}
		})
		figure("duplicated", lower, rx(func(x *rxFigures) compareFig { return count(x.Duplicated) }))
		figure("reordered", lower, rx(func(x *rxFigures) compareFig { return count(x.Reordered) }))
		figure("corrupted", lower, rx(func(x *rxFigures) compareFig { return count(x.Corrupted) }))
		lat := func(f func(p50, p99, max int64) int64) func(int) compareFig {
			return rx(func(x *rxFigures) compareFig {
				if x.Latency == nil || x.Latency.Samples == 0 {
					return compareFig{}
				}
				return ns(f(x.Latency.P50Ns, x.Latency.P99Ns, x.Latency.MaxNs))
			})
		}
		figure("latency p50", lower, lat(func(p50, _, _ int64) int64 { return p50 }))
		figure("latency p99", lower, lat(func(_, p99, _ int64) int64 { return p99 }))
		figure("latency max", lower, lat(func(_, _, max int64) int64 { return max }))
		figure("jitter (RFC 3550)", lower, rx(func(x *rxFigures) compareFig { return ns(x.JitterNs) }))
	}
	word("workers", func(_ JobView, r *report.Report) string {
		if r == nil {
			return "–"
		}
		return strconv.Itoa(len(r.Workers))
	})
	word("plan", func(_ JobView, r *report.Report) string {
		if r == nil {
			return "–"
		}
		return orDash(r.Plan)
	})
	word("stop", func(_ JobView, r *report.Report) string {
		if r == nil {
			return "–"
		}
		return orDash(r.Stop)
	})
	d.Baseline = d.Jobs[0].ID
	s.render(w, http.StatusOK, "compare", "Compare", d)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
