package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/wpg-dev/wpg/report"
)

// MaxCompare caps the jobs of one compare page.
const MaxCompare = 8

// compareRow is one line of the compare table: a label and a value per
// job.
type compareRow struct {
	Label  string
	Values []string
}

type comparePage struct {
	Jobs   []JobView
	Rows   []compareRow
	Charts []chartData
	Error  string
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
	}
	row := func(label string, f func(v JobView, r *report.Report) string) {
		cr := compareRow{Label: label}
		for i, v := range d.Jobs {
			cr.Values = append(cr.Values, f(v, reps[i]))
		}
		d.Rows = append(d.Rows, cr)
	}
	rep := func(f func(r *report.Report) string) func(JobView, *report.Report) string {
		return func(_ JobView, r *report.Report) string {
			if r == nil {
				return "–"
			}
			return f(r)
		}
	}
	row("status", func(v JobView, _ *report.Report) string { return string(v.Status) })
	row("backend", func(v JobView, _ *report.Report) string { return v.Backend })
	row("started", func(v JobView, _ *report.Report) string { return v.StartedAt.Format("2006-01-02 15:04:05Z") })
	row("started by", func(v JobView, _ *report.Report) string { return orDash(v.StartedBy) })
	row("target rate", rep(func(r *report.Report) string { return orDash(r.Rate) }))
	row("frames", func(v JobView, _ *report.Report) string { return fmtCount(v.Frames) })
	row("seconds", func(v JobView, _ *report.Report) string { return fmtSecs(v.Elapsed) })
	row("rate", func(v JobView, _ *report.Report) string { return fmtRate(v.PPS) })
	row("bit rate", func(v JobView, _ *report.Report) string { return fmtBits(v.BPS) })
	row("achieved ratio", rep(func(r *report.Report) string {
		if r.Rate == "" {
			return "–"
		}
		return fmt.Sprintf("%.4f", r.AchievedRatio)
	}))
	row("lateness p50", rep(func(r *report.Report) string { return fmtNs(r.LatenessP50Ns) }))
	row("lateness p99", rep(func(r *report.Report) string { return fmtNs(r.LatenessP99Ns) }))
	row("lateness max", rep(func(r *report.Report) string { return fmtNs(r.LatenessMaxNs) }))
	row("workers", rep(func(r *report.Report) string { return strconv.Itoa(len(r.Workers)) }))
	row("plan", rep(func(r *report.Report) string { return orDash(r.Plan) }))
	row("stop", rep(func(r *report.Report) string { return orDash(r.Stop) }))
	s.render(w, http.StatusOK, "compare", "Compare", d)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
