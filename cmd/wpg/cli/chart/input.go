package chart

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/plot"

	"github.com/wpg-dev/wpg/bench"
	"github.com/wpg-dev/wpg/ndr"
	"github.com/wpg-dev/wpg/recv"
	"github.com/wpg-dev/wpg/report"
	"github.com/wpg-dev/wpg/units"
)

// MaxInput bounds the report Plots reads (report.MaxDocument).
const MaxInput = report.MaxDocument

// Plots builds the panels for the report document b: a matrix
// (wpg.bench/v1) gives one ranking per size, and with intervals each
// path's run over time; a send or bench report (wpg.report/v1 and v2) its run
// over time (Timeline), when paced its lateness and with its own receiver
// the receiver's latency; a receiver's (wpg.recv/v1) its run over time
// and its latency; an RFC 2544 report (wpg.ndr/1) the throughput, latency
// and back-to-back burst per frame size. A report with nothing to draw is an error
// that says which flag gives it.
func Plots(b []byte) ([]*plot.Plot, error) {
	schema, err := report.ReadSchema(b, "wpg bench, send or recv --json")
	if err != nil {
		return nil, err
	}
	switch schema {
	case bench.Schema:
		var r bench.Result
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("matrix report: %w", report.JSONError(b, err))
		}
		return matrixPlots(&r)
	case report.Schema, "wpg.report/v1": // v2 added fields only (a merge's)
		var r report.Report
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("report: %w", report.JSONError(b, err))
		}
		return runPlots(&r)
	case "wpg.recv/v1":
		var r recvDoc
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("receiver report: %w", report.JSONError(b, err))
		}
		return recvPlots(&r)
	case ndr.Schema:
		var r ndr.Report
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("ndr report: %w", report.JSONError(b, err))
		}
		return ndrPlots(&r) // ndr.go
	case "":
		return nil, errors.New("no \"schema\" field: give the JSON of wpg bench, send, recv or ndr --json")
	}
	return nil, fmt.Errorf("schema %q: wpg plot draws %s, %s, wpg.recv/v1 and %s", schema, bench.Schema, report.Schema, ndr.Schema)
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
			{"p50", float64(r.LatenessP50Ns)}, {"p99", float64(r.LatenessP99Ns)}, {"max", float64(r.LatenessMaxNs)},
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
