package server

import (
	"encoding/json"
	"sort"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

var (
	jobLabels    = []string{"job", "name", "backend"}
	descFrames   = prometheus.NewDesc("wpg_job_frames_total", "Frames sent by the job so far.", jobLabels, nil)
	descBytes    = prometheus.NewDesc("wpg_job_bytes_total", "Frame bytes sent by the job so far.", jobLabels, nil)
	descPPS      = prometheus.NewDesc("wpg_job_rate_pps", "Mean frame rate of the job since its start (frames/s).", jobLabels, nil)
	descBPS      = prometheus.NewDesc("wpg_job_rate_bps", "Mean bit rate of the job since its start (layer 2 bits/s).", jobLabels, nil)
	descRunning  = prometheus.NewDesc("wpg_job_running", "1 while the job runs, 0 once it has ended.", jobLabels, nil)
	descLate     = prometheus.NewDesc("wpg_job_lateness_seconds", "Pacing lateness of a paced job: p50, p99 and max from its start while it runs (live, about 50 ms behind); the report's p50 and p99 jitter, mean and max once it has ended.", append(jobLabels, "stat"), nil)
	descVerify   = prometheus.NewDesc("wpg_job_verification_total", "The receiver's verification counts of a finished job that had one, by field of its report.", append(jobLabels, "field"), nil)
	descJobs     = prometheus.NewDesc("wpg_jobs_running", "Jobs running now.", nil, nil)
	descRxFrames = prometheus.NewDesc("wpg_job_receiver_frames_total", "Intact frames the running job's own receivers (local paths) counted so far (their progress messages, about every 250 ms).", jobLabels, nil)
	descRxLost   = prometheus.NewDesc("wpg_job_receiver_lost", "Frames the running job's own receivers counted lost so far (a gauge: a late frame fills a gap).", jobLabels, nil)
	descRxLat    = prometheus.NewDesc("wpg_job_receiver_latency_seconds", "One-way latency the running job's own receivers measured from its start: p50, p99 and max.", append(jobLabels, "stat"), nil)
)

// jobCollector reads the running jobs, and the finished ones this process
// still shows, at each scrape: snapshots are atomics only.
type jobCollector struct{ s *Server }

func (c jobCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descFrames, descBytes, descPPS, descBPS, descRunning, descLate, descVerify, descJobs, descRxFrames, descRxLost, descRxLat} {
		ch <- d
	}
}

func (c jobCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	s.mu.Lock()
	entries := make([]*entry, 0, len(s.running)+len(s.finished))
	for _, e := range s.running {
		entries = append(entries, e)
	}
	running := len(entries)
	entries = append(entries, s.finished...)
	s.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(descJobs, prometheus.GaugeValue, float64(running))
	seen := map[int64]bool{}
	for _, e := range entries {
		if seen[e.id] {
			continue
		}
		seen[e.id] = true
		l := []string{strconv.FormatInt(e.id, 10), e.name, e.spec.BackendName()}
		var frames, bytes uint64
		var pps, bps float64
		up := 1.0
		select {
		case <-e.done:
			up = 0
			if r := e.report; r != nil {
				frames, bytes, pps, bps = r.Frames, r.Bytes, r.PPS, r.BPS
				if r.Rate != "" {
					for _, q := range []struct {
						stat string
						ns   int64
					}{{"p50", r.P50JitterNs}, {"p99", r.P99JitterNs}, {"mean", r.LatenessMeanNs}, {"max", r.LatenessMaxNs}} {
						ch <- prometheus.MustNewConstMetric(descLate, prometheus.GaugeValue, float64(q.ns)/1e9, append(l, q.stat)...)
					}
				}
				verification(ch, l, r.Verification)
			}
		default:
			snap := e.run.Snapshot()
			frames, bytes, pps, bps = snap.Frames, snap.Bytes, snap.PPS, snap.BPS
			if lat := snap.Lateness; lat.Count > 0 {
				for _, q := range []struct {
					stat string
					ns   int64
				}{{"p50", lat.P50Ns}, {"p99", lat.P99Ns}, {"max", lat.MaxNs}} {
					ch <- prometheus.MustNewConstMetric(descLate, prometheus.GaugeValue, float64(q.ns)/1e9, append(l, q.stat)...)
				}
			}
			if r := snap.Receiver; r != nil {
				ch <- prometheus.MustNewConstMetric(descRxFrames, prometheus.CounterValue, float64(r.Frames), l...)
				ch <- prometheus.MustNewConstMetric(descRxLost, prometheus.GaugeValue, float64(r.Lost), l...)
				if lat := r.Latency; lat.Count > 0 {
					for _, q := range []struct {
						stat string
						ns   int64
					}{{"p50", lat.P50Ns}, {"p99", lat.P99Ns}, {"max", lat.MaxNs}} {
						ch <- prometheus.MustNewConstMetric(descRxLat, prometheus.GaugeValue, float64(q.ns)/1e9, append(l, q.stat)...)
					}
				}
			}
		}
		ch <- prometheus.MustNewConstMetric(descFrames, prometheus.CounterValue, float64(frames), l...)
		ch <- prometheus.MustNewConstMetric(descBytes, prometheus.CounterValue, float64(bytes), l...)
		ch <- prometheus.MustNewConstMetric(descPPS, prometheus.GaugeValue, pps, l...)
		ch <- prometheus.MustNewConstMetric(descBPS, prometheus.GaugeValue, bps, l...)
		ch <- prometheus.MustNewConstMetric(descRunning, prometheus.GaugeValue, up, l...)
	}
}

// verification exports the whole-number fields at the top of a receiver's
// report (frames, lost, corrupt, …).
func verification(ch chan<- prometheus.Metric, l []string, raw json.RawMessage) {
	if len(raw) == 0 {
		return
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return
	}
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if f, ok := v.(float64); ok && f >= 0 && f == float64(uint64(f)) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		ch <- prometheus.MustNewConstMetric(descVerify, prometheus.CounterValue, m[k].(float64), append(l, k)...)
	}
}

// newRegistry is the server's private registry: the jobs, plus the
// process and Go runtime collectors.
func (s *Server) newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(jobCollector{s}, collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	return reg
}
