package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/pace"
	"github.com/wpg-dev/wpg/report"
)

// MaxChartSamples caps the samples a page inlines for one job's charts:
// a longer job's are thinned evenly (the samples API has them all).
const MaxChartSamples = 3600

// thin keeps at most MaxChartSamples of xs, evenly spread, the last one
// always.
func thin(xs []Sample) []Sample {
	if len(xs) <= MaxChartSamples {
		return xs
	}
	out := make([]Sample, 0, MaxChartSamples)
	for i := range MaxChartSamples {
		out = append(out, xs[i*(len(xs)-1)/(MaxChartSamples-1)])
	}
	return out
}

// jobsData is the jobs page: running jobs, then the last finished ones.
type jobsData struct {
	Running  []JobView
	Finished []JobView
	Limit    int
	Error    string
}

func (s *Server) jobsData(r *http.Request, finished bool) jobsData {
	d := jobsData{Running: []JobView{}, Finished: []JobView{}, Limit: s.opt.JobHistory}
	s.mu.Lock()
	running := make([]*entry, 0, len(s.running))
	for _, e := range s.running {
		running = append(running, e)
	}
	unfinished := len(s.running) + len(s.pending)
	s.mu.Unlock()
	slices.SortFunc(running, func(a, b *entry) int { return int(b.id - a.id) })
	for _, e := range running {
		d.Running = append(d.Running, s.view(e, nil))
	}
	if !finished || s.opt.JobHistory <= 0 {
		return d
	}
	recs, _, err := s.store.List(r.Context(), 0, s.opt.JobHistory+unfinished)
	if err != nil {
		d.Error = "job database: " + err.Error()
	}
	for _, rec := range recs {
		if rec.Status == StatusRunning || len(d.Finished) == s.opt.JobHistory {
			continue
		}
		d.Finished = append(d.Finished, s.view(nil, rec))
	}
	return d
}

func (s *Server) handleJobsPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, "jobs", "Jobs", s.jobsData(r, true))
}

func (s *Server) handleRunningFragment(w http.ResponseWriter, r *http.Request) {
	s.fragment(w, http.StatusOK, "jobs", "running", s.jobsData(r, false))
}

// chartData is what a job page's charts start from: the stored samples,
// and for a running job the stream to follow.
type chartData struct {
	ID      int64    `json:"id"`
	Name    string   `json:"name"`
	Running bool     `json:"running"`
	Events  string   `json:"events,omitempty"`
	Samples []Sample `json:"samples"`
	// TargetPPS is the rate the job aims at (0: flat out), drawn as a
	// line on its rate chart.
	TargetPPS float64 `json:"target_pps,omitempty"`
	// Streams names the template's streams whose rates the samples (and
	// the snapshots) carry, in order; none for payload frames.
	Streams []string `json:"streams,omitempty"`
	// BPSLayer is the layer of the bit rates ("l2", "l1": the job's
	// rate_layer), FrameOverhead the bytes each frame counts beyond its
	// own at that layer (the live chart's bits of a window).
	BPSLayer      string `json:"bps_layer"`
	FrameOverhead int    `json:"frame_overhead"`
}

// streamRow is one line of the job page's table of streams.
type streamRow struct {
	Name   string
	Frames uint64
	PPS    float64
	Share  float64 // of all the streams' frames, in per cent
	// Bytes and BPS are the report's (at its bps_layer); "" while the
	// job runs (counted at its end only).
	Bytes, BPS string
}

// jobPage is the job detail page.
type jobPage struct {
	Job     JobView
	Spec    string
	Workers []WorkerView
	Report  string // the table, as wpg send prints it
	// Receiver is a finished job's receiver counts from its report (the
	// live page fills them from the event stream); "" when it had none.
	Receiver string
	Chart    chartData
	Notice   string
	// Progress is how far a running job with a count or a duration has
	// come (nil: none).
	Progress *ProgressView
	// Streams are the template's streams: live while the job runs, the
	// report's after.
	Streams []streamRow
}

// Percent writes a fraction (0 to 1) in whole per cent.
func (p *ProgressView) Percent() int { return int(p.Fraction * 100) }

// Left writes the time left, or "" when it is not known.
func (p *ProgressView) Left() string {
	if p.RemainingSeconds == nil {
		return ""
	}
	return fmtLeft(*p.RemainingSeconds)
}

// streamsOf fills the page's streams from n streams (stream i's name and
// frames), their rates over secs and their shares of the frames: the
// chart's names and the table; none for more than MaxChartStreams.
func (d *jobPage) streamsOf(n int, stream func(i int) (string, uint64), secs float64) {
	if n > MaxChartStreams {
		return
	}
	var total uint64
	d.Streams = make([]streamRow, n)
	for i := range n {
		r := &d.Streams[i]
		r.Name, r.Frames = stream(i)
		total += r.Frames
		d.Chart.Streams = append(d.Chart.Streams, r.Name)
		if secs > 0 {
			r.PPS = float64(r.Frames) / secs
		}
	}
	for i := range d.Streams {
		if total > 0 {
			d.Streams[i].Share = float64(d.Streams[i].Frames) / float64(total) * 100
		}
	}
}

// receiverCounts is the line of the job page's Receiver section for a
// finished job, from its report's verification (the receivers' answers),
// as the live page writes it from the event stream's receiver counts.
func receiverCounts(v json.RawMessage) string {
	if len(v) == 0 {
		return ""
	}
	var r struct {
		Frames, Lost, Duplicated, Corrupted uint64
		Latency                             *struct {
			Samples uint64 `json:"samples"`
			P50     int64  `json:"p50_ns"`
			P99     int64  `json:"p99_ns"`
		}
	}
	if json.Unmarshal(v, &r) != nil {
		return ""
	}
	s := fmt.Sprintf("%s frames, %s lost, %s duplicated, %s corrupted", fmtCount(r.Frames), fmtCount(r.Lost), fmtCount(r.Duplicated), fmtCount(r.Corrupted))
	if l := r.Latency; l != nil && l.P50 > 0 {
		s += fmt.Sprintf(", latency p50 %s p99 %s", fmtNs(l.P50), fmtNs(l.P99))
	}
	return s
}

func (s *Server) handleJobPage(w http.ResponseWriter, r *http.Request) {
	e, rec, ok := s.findPage(w, r)
	if !ok {
		return
	}
	var d jobPage
	var id int64
	if e != nil {
		id = e.id
		d.Job = s.view(e, nil)
		snap := e.run.Snapshot()
		for _, wk := range snap.Workers {
			d.Workers = append(d.Workers, WorkerView{wk.Worker, wk.Frames, wk.Bytes, wk.PPS})
		}
		d.Progress = progressOf(e.spec, snap)
		d.Chart.TargetPPS = snap.TargetPPS
		d.streamsOf(len(snap.Streams), func(i int) (string, uint64) { return snap.Streams[i].Name, snap.Streams[i].Frames }, snap.Elapsed.Seconds())
		d.Chart.Running = true
		d.Chart.Events = fmt.Sprintf("/api/v1/jobs/%d/events", id)
	} else {
		id = rec.ID
		d.Job = s.view(nil, rec)
		if rec.Report != nil {
			var rep report.Report
			if json.Unmarshal(rec.Report, &rep) == nil {
				var b bytes.Buffer
				rep.WriteTable(&b)
				d.Report = b.String()
				d.Receiver = receiverCounts(rep.Verification)
				for _, wk := range rep.Workers {
					d.Workers = append(d.Workers, WorkerView{Worker: wk.Worker, Frames: wk.Frames, Bytes: wk.Bytes, PPS: wk.PPS})
				}
				d.Chart.TargetPPS = rep.TargetPPS
				d.streamsOf(len(rep.Streams), func(i int) (string, uint64) { return rep.Streams[i].Name, rep.Streams[i].Frames }, rep.Seconds)
				for i := range d.Streams {
					st := rep.Streams[i]
					d.Streams[i].Bytes, d.Streams[i].BPS = fmtBytes(st.Bytes), fmtBits(st.BPS)
					if st.PPS > 0 {
						d.Streams[i].PPS = st.PPS
					}
				}
			}
		}
	}
	var js job.Spec
	json.Unmarshal(d.Job.Spec, &js)
	d.Chart.BPSLayer = "l2"
	if layer, err := pace.ParseLayer(js.RateLayer); err == nil && layer == pace.L1 {
		d.Chart.BPSLayer, d.Chart.FrameOverhead = "l1", pace.L1Overhead
	}
	var spec bytes.Buffer
	json.Indent(&spec, d.Job.Spec, "", "  ")
	d.Spec = spec.String()
	xs, err := s.store.Samples(r.Context(), id)
	if err != nil {
		d.Notice = "job database: " + err.Error()
	}
	d.Chart.ID, d.Chart.Name, d.Chart.Samples = id, d.Job.Name, thin(xs)
	s.render(w, http.StatusOK, "job", fmt.Sprintf("Job %d", id), d)
}

// findPage is find for pages: 400 and 404 as pages.
func (s *Server) findPage(w http.ResponseWriter, r *http.Request) (*entry, *JobRecord, bool) {
	id, ok := parseID(r.PathValue("id"))
	if !ok {
		s.render(w, http.StatusBadRequest, "error", "Bad job ID", "“"+r.PathValue("id")+"” is not a job ID: job IDs are whole numbers from 1")
		return nil, nil, false
	}
	e, rec, err := s.locate(r.Context(), id)
	switch {
	case err != nil:
		s.render(w, http.StatusInternalServerError, "error", "Job database", "job database: "+err.Error())
		return nil, nil, false
	case e == nil && rec == nil:
		s.render(w, http.StatusNotFound, "error", "No such job", fmt.Sprintf("there is no job %d (deleted, pruned, or never started)", id))
		return nil, nil, false
	}
	return e, rec, true
}

func (s *Server) handleStopForm(w http.ResponseWriter, r *http.Request) {
	e, rec, ok := s.findPage(w, r)
	if !ok {
		return
	}
	id := int64(0)
	if e != nil {
		id = e.id
		e.stopAsked.Store(true)
		e.run.Stop()
		select { // the page shows the report when it comes at once
		case <-e.done:
		case <-time.After(2 * time.Second):
		}
	} else {
		id = rec.ID
	}
	http.Redirect(w, r, fmt.Sprintf("/jobs/%d", id), http.StatusSeeOther)
}

func (s *Server) handleDeleteForm(w http.ResponseWriter, r *http.Request) {
	e, rec, ok := s.findPage(w, r)
	if !ok {
		return
	}
	if e != nil {
		s.render(w, http.StatusConflict, "error", "Job running", fmt.Sprintf("job %d is running: stop it first", e.id))
		return
	}
	if _, err := s.store.Delete(r.Context(), rec.ID); err != nil {
		s.render(w, http.StatusInternalServerError, "error", "Job database", "job database: "+err.Error())
		return
	}
	s.forget(rec.ID)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
