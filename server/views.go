package server

import (
	"encoding/json"
	"time"

	"github.com/wpg-dev/wpg/job"
)

// JobView is a job as the API shows it.
type JobView struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// StartedBy is who started it (CreateRequest.StartedBy), Client the
	// address the request came from.
	StartedBy string          `json:"started_by,omitempty"`
	Client    string          `json:"client,omitempty"`
	Status    Status          `json:"status"`
	Backend   string          `json:"backend"`
	Cores     string          `json:"cores,omitempty"`
	Spec      json.RawMessage `json:"spec"`
	CreatedAt time.Time       `json:"created_at"`
	StartedAt time.Time       `json:"started_at"`
	EndedAt   *time.Time      `json:"ended_at,omitempty"`
	Error     string          `json:"error,omitempty"`
	// Frames, Bytes, PPS and BPS: live while running, the report's after.
	Frames    uint64  `json:"frames"`
	Bytes     uint64  `json:"bytes"`
	PPS       float64 `json:"pps"`
	BPS       float64 `json:"bps"`
	Elapsed   float64 `json:"elapsed_seconds"`
	HasReport bool    `json:"has_report"`
	// Progress is how far a running job with a count or a duration has
	// come (SnapshotView.Progress); absent otherwise.
	Progress *ProgressView `json:"progress,omitempty"`
}

// SnapshotView is one snapshot of the event stream.
type SnapshotView struct {
	Job     int64     `json:"job"`
	At      time.Time `json:"at"`
	Elapsed float64   `json:"elapsed_seconds"`
	Frames  uint64    `json:"frames"`
	Bytes   uint64    `json:"bytes"`
	PPS     float64   `json:"pps"`
	BPS     float64   `json:"bps"`
	// BPSLayer is the layer BPS counts the bits at: "l2" (the frames'
	// bytes) or "l1" (with 24 bytes of preamble and gap per frame), the
	// job's rate_layer, as the report's bps_layer.
	BPSLayer string       `json:"bps_layer"`
	Workers  []WorkerView `json:"workers"`
	Done     bool         `json:"done"`
	// Lateness is the pacing lateness from the start (live: up to about
	// 50 ms before At); LatenessWindow that since the previous snapshot.
	// Zero for a flat-out run.
	Lateness       LatenessView `json:"lateness"`
	LatenessWindow LatenessView `json:"lateness_window"`
	// The report's lateness figures, once Done.
	LatenessMaxNs  int64 `json:"lateness_max_ns"`
	LatenessMeanNs int64 `json:"lateness_mean_ns"`
	LatenessP50Ns  int64 `json:"lateness_p50_ns"`
	LatenessP99Ns  int64 `json:"lateness_p99_ns"`
	// P50JitterNs and P99JitterNs are LatenessP50Ns and LatenessP99Ns
	// under their old names, deprecated (the pacer's lateness, not a
	// jitter; docs/api.md): they go with the report's p50_jitter and
	// p99_jitter.
	P50JitterNs int64 `json:"p50_jitter_ns"`
	P99JitterNs int64 `json:"p99_jitter_ns"`
	// Receiver is what the job's own receivers (local paths with
	// start_receiver, or connect) counted so far; absent without one.
	Receiver *ReceiverView `json:"receiver,omitempty"`
	// TargetPPS is the frame rate the job aims at (0: flat out).
	TargetPPS float64 `json:"target_pps"`
	// Streams are a packet template's streams so far, in its order (up to
	// 50 ms behind Frames while the job runs); absent for payload frames
	// and for templates of more than MaxChartStreams streams.
	Streams []StreamView `json:"streams,omitempty"`
	// Progress is how far a job with a count or a duration has come;
	// absent for one that runs until it is stopped or its template's
	// counts are sent, and for a segment of a job (its count is the
	// whole job's).
	Progress *ProgressView `json:"progress,omitempty"`
}

// StreamView is one template stream of a snapshot: its frames so far and
// their mean rate since the start.
type StreamView struct {
	Stream int     `json:"stream"`
	Name   string  `json:"name"`
	Frames uint64  `json:"frames"`
	PPS    float64 `json:"pps"`
}

// ProgressView is how far a job has come towards its end: Fraction (0 to
// 1) of its count or of its duration, whichever is further (By: "count"
// or "duration"), and RemainingSeconds, the time left at the target rate
// (flat out: at the mean rate so far) or of the duration, whichever is
// less; absent while there is no rate to tell it by.
type ProgressView struct {
	Fraction         float64  `json:"fraction"`
	By               string   `json:"by"`
	RemainingSeconds *float64 `json:"remaining_seconds,omitempty"`
}

// progressOf is how far a job of spec has come at s; nil when it has no
// count and no duration (or is a segment).
func progressOf(spec job.Spec, s job.Snapshot) *ProgressView {
	if spec.Segment != "" || (spec.Count == 0 && spec.Duration <= 0) {
		return nil
	}
	p := &ProgressView{}
	left := -1.0
	if spec.Count > 0 {
		p.Fraction, p.By = min(float64(s.Frames)/float64(spec.Count), 1), "count"
		rate := s.TargetPPS
		if !(rate > 0) {
			rate = s.PPS
		}
		if rate > 0 {
			left = float64(spec.Count-min(s.Frames, spec.Count)) / rate
		}
	}
	if spec.Duration > 0 {
		f := min(s.Elapsed.Seconds()/spec.Duration.Seconds(), 1)
		if f > p.Fraction || p.By == "" {
			p.Fraction, p.By = f, "duration"
		}
		if d := max(spec.Duration-s.Elapsed, 0).Seconds(); left < 0 || d < left {
			left = d
		}
	}
	if s.Done {
		p.Fraction, left = 1, 0
	}
	if left >= 0 {
		p.RemainingSeconds = &left
	}
	return p
}

// ReceiverView is job.ReceiverSnapshot: the receivers' totals so far
// (their progress messages, about every 250 ms; once done, their
// answers), their one-way latency from the start and since the previous
// snapshot (count 0: not measured).
type ReceiverView struct {
	Receivers     int          `json:"receivers"`
	Frames        uint64       `json:"frames"`
	Bytes         uint64       `json:"bytes"`
	Lost          uint64       `json:"lost"`
	Duplicated    uint64       `json:"duplicated"`
	Corrupted     uint64       `json:"corrupted"`
	Latency       LatenessView `json:"latency"`
	LatencyWindow LatenessView `json:"latency_window"`
	// Final is true once the counts are the receivers' answers.
	Final bool `json:"final"`
}

// LatenessView is job.LatenessStats: how many pacer grants, and the
// percentiles of their lateness in nanoseconds.
type LatenessView struct {
	Count int64 `json:"count"`
	P50Ns int64 `json:"p50_ns"`
	P99Ns int64 `json:"p99_ns"`
	MaxNs int64 `json:"max_ns"`
}

func latenessView(l job.LatenessStats) LatenessView {
	return LatenessView{Count: l.Count, P50Ns: l.P50Ns, P99Ns: l.P99Ns, MaxNs: l.MaxNs}
}

// WorkerView is one worker of a snapshot.
type WorkerView struct {
	Worker int     `json:"worker"`
	Frames uint64  `json:"frames"`
	Bytes  uint64  `json:"bytes"`
	PPS    float64 `json:"pps"`
}

// snapshotView shows s, a snapshot of a job of spec, with the lateness
// window since prev (the previous snapshot of the stream; zero: since the
// start).
func snapshotView(id int64, spec job.Spec, s, prev job.Snapshot) SnapshotView {
	v := SnapshotView{Job: id, TargetPPS: s.TargetPPS, Progress: progressOf(spec, s), BPSLayer: s.BPSLayer, At: s.At, Elapsed: s.Elapsed.Seconds(), Frames: s.Frames, Bytes: s.Bytes, PPS: s.PPS, BPS: s.BPS,
		Done: s.Done, Lateness: latenessView(s.Lateness), LatenessWindow: latenessView(s.LatenessSince(prev)),
		LatenessMaxNs: s.LatenessMaxNs, LatenessMeanNs: s.LatenessMeanNs, LatenessP50Ns: s.LatenessP50Ns, LatenessP99Ns: s.LatenessP99Ns, P50JitterNs: s.LatenessP50Ns, P99JitterNs: s.LatenessP99Ns,
		Workers: make([]WorkerView, len(s.Workers))}
	for i, w := range s.Workers {
		v.Workers[i] = WorkerView{w.Worker, w.Frames, w.Bytes, w.PPS}
	}
	if len(s.Streams) <= MaxChartStreams {
		for _, st := range s.Streams {
			v.Streams = append(v.Streams, StreamView{st.Stream, st.Name, st.Frames, st.PPS})
		}
	}
	if r := s.Receiver; r != nil {
		v.Receiver = &ReceiverView{Receivers: r.Receivers, Frames: r.Frames, Bytes: r.Bytes, Lost: r.Lost, Duplicated: r.Duplicated,
			Corrupted: r.Corrupted, Latency: latenessView(r.Latency), LatencyWindow: latenessView(s.ReceiverLatencySince(prev)), Final: r.Final}
	}
	return v
}

// view shows a job: a running entry live, else its record.
func (s *Server) view(e *entry, rec *JobRecord) JobView {
	if e != nil {
		select {
		case <-e.done:
			rec = e.final
		default:
			spec, _ := json.Marshal(e.spec)
			snap := e.run.Snapshot()
			v := JobView{ID: e.id, Name: e.name, StartedBy: e.startedBy, Client: e.client, Status: StatusRunning, Backend: e.spec.BackendName(), Cores: job.FormatCPUList(e.cores),
				Spec: spec, CreatedAt: e.created.UTC(), StartedAt: e.created.UTC(), Frames: snap.Frames, Bytes: snap.Bytes, PPS: snap.PPS, BPS: snap.BPS,
				Elapsed: snap.Elapsed.Seconds(), Progress: progressOf(e.spec, snap)}
			if msg := e.unstored.Load(); msg != nil {
				v.Error = *msg
			}
			return v
		}
	}
	v := JobView{ID: rec.ID, Name: rec.Name, StartedBy: rec.StartedBy, Client: rec.Client, Status: rec.Status, Cores: rec.Cores, Spec: json.RawMessage(rec.Spec),
		CreatedAt: time.Unix(0, rec.CreatedAt).UTC(), StartedAt: time.Unix(0, rec.StartedAt).UTC(), Error: rec.Error,
		Frames: rec.Frames, Bytes: rec.Bytes, HasReport: rec.Report != nil}
	var spec job.Spec
	if json.Unmarshal([]byte(rec.Spec), &spec) == nil {
		v.Backend = spec.BackendName()
	}
	if rec.EndedAt != 0 {
		t := time.Unix(0, rec.EndedAt).UTC()
		v.EndedAt = &t
		v.Elapsed = t.Sub(v.StartedAt).Seconds()
	}
	if rec.Report != nil {
		var rep struct{ PPS, BPS, Seconds float64 }
		if json.Unmarshal(rec.Report, &rep) == nil {
			v.PPS, v.BPS, v.Elapsed = rep.PPS, rep.BPS, rep.Seconds
		}
	} else if v.Elapsed > 0 {
		// No report (interrupted, or failed on the way): the mean rates
		// of the totals its samples reached.
		v.PPS, v.BPS = float64(v.Frames)/v.Elapsed, float64(v.Bytes)*8/v.Elapsed
	}
	return v
}
