// Package metrics is the one definition of wpg's Prometheus metrics: the
// names, help texts and labels that `wpg serve`'s /metrics and the
// --metrics-listen endpoint of `wpg send` and `wpg recv` share, and the
// code that turns a run's snapshot or report, or a receiver's progress and
// result, into those metrics (docs/api.md, docs/distributed.md).
//
// Every metric carries the labels of JobLabels: job (wpg serve's job id,
// or a segmented run's job identity, the same for all its segments), name
// and backend. A run's own endpoint adds the constant label segment
// ("1/3") through the registry (Serve). Counters are totals from the
// start of the run; histograms are cumulative over it. Metrics read
// snapshots (atomics) at each scrape: nothing here touches a hot loop.
//
// The package sits beside job, above the data paths: it imports job,
// report and recv, and Prometheus's client library. It never prints.
package metrics

import (
	"encoding/json"
	"sort"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wpg-dev/wpg/internal/hist"
	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/report"
)

// JobLabels are the variable labels of every per-job metric, in the order
// the label values are given.
var JobLabels = []string{"job", "name", "backend"}

// The metrics. wpg serve's /metrics has had the first eleven since it
// began; the rest came with --metrics-listen (issue #25).
var (
	Frames          = prometheus.NewDesc("wpg_job_frames_total", "Frames sent by the job so far.", JobLabels, nil)
	Bytes           = prometheus.NewDesc("wpg_job_bytes_total", "Frame bytes sent by the job so far.", JobLabels, nil)
	PPS             = prometheus.NewDesc("wpg_job_rate_pps", "Mean frame rate of the job since its start (frames/s).", JobLabels, nil)
	BPS             = prometheus.NewDesc("wpg_job_rate_bps", "Mean bit rate of the job since its start (layer 2 bits/s).", JobLabels, nil)
	Running         = prometheus.NewDesc("wpg_job_running", "1 while the job runs, 0 once it has ended.", JobLabels, nil)
	Lateness        = prometheus.NewDesc("wpg_job_lateness_seconds", "Pacing lateness of a paced job: p50, p99 and max from its start while it runs (live, about 50 ms behind); the report's p50 and p99 jitter, mean and max once it has ended.", append(JobLabels[:len(JobLabels):len(JobLabels)], "stat"), nil)
	Verification    = prometheus.NewDesc("wpg_job_verification_total", "The receiver's verification counts of a finished job that had one, by field of its report.", append(JobLabels[:len(JobLabels):len(JobLabels)], "field"), nil)
	JobsRunning     = prometheus.NewDesc("wpg_jobs_running", "Jobs running now.", nil, nil)
	ReceiverFrames  = prometheus.NewDesc("wpg_job_receiver_frames_total", "Intact frames the job's receivers counted so far: a running job's own receivers (local paths, their progress messages, about every 250 ms), or wpg recv's.", JobLabels, nil)
	ReceiverLost    = prometheus.NewDesc("wpg_job_receiver_lost", "Frames the job's receivers counted lost so far (a gauge: a late frame fills a gap).", JobLabels, nil)
	ReceiverLatency = prometheus.NewDesc("wpg_job_receiver_latency_seconds", "One-way latency the job's receivers measured from its start: p50, p99 and max.", append(JobLabels[:len(JobLabels):len(JobLabels)], "stat"), nil)

	Errors               = prometheus.NewDesc("wpg_job_errors_total", "Workers of the job that stopped on an error (a backend's send or write failed).", JobLabels, nil)
	LatenessHistogram    = prometheus.NewDesc("wpg_job_grant_lateness_seconds", "Pacing lateness of a paced job's grants against their deadlines, from its start (the histogram behind wpg_job_lateness_seconds and the report's p50 and p99 jitter).", JobLabels, nil)
	StreamFrames         = prometheus.NewDesc("wpg_job_stream_frames_total", "Frames sent of each stream of the job's template, once the run has ended (up to MaxStreams streams).", append(JobLabels[:len(JobLabels):len(JobLabels)], "stream", "stream_name"), nil)
	ReceiverBytes        = prometheus.NewDesc("wpg_job_receiver_bytes_total", "Bytes of the intact frames the job's receivers counted so far.", JobLabels, nil)
	ReceiverDuplicated   = prometheus.NewDesc("wpg_job_receiver_duplicated_total", "Frames the job's receivers saw twice.", JobLabels, nil)
	ReceiverCorrupted    = prometheus.NewDesc("wpg_job_receiver_corrupted_total", "Frames whose signature, header or checksum check failed at the job's receivers.", JobLabels, nil)
	ReceiverUnsigned     = prometheus.NewDesc("wpg_job_receiver_unsigned_total", "Frames without a wpg signature at the job's receivers (other traffic).", JobLabels, nil)
	ReceiverLatencyHist  = prometheus.NewDesc("wpg_job_receiver_one_way_latency_seconds", "One-way latency of the frames the job's receivers counted, from the start (the histogram behind wpg_job_receiver_latency_seconds).", JobLabels, nil)
	ReceiverStreamFrames = prometheus.NewDesc("wpg_job_receiver_stream_frames_total", "Intact frames the job's receivers counted of each stream, once they have ended (up to MaxStreams streams).", append(JobLabels[:len(JobLabels):len(JobLabels)], "stream"), nil)
	ReceiverStreamLost   = prometheus.NewDesc("wpg_job_receiver_stream_lost", "Frames the job's receivers counted lost of each stream, once they have ended (up to MaxStreams streams).", append(JobLabels[:len(JobLabels):len(JobLabels)], "stream"), nil)

	// RunDescs are the metrics of a sending run (CollectSnapshot,
	// CollectReport), ReceiverDescs those of a receiver (Receiver).
	RunDescs      = []*prometheus.Desc{Frames, Bytes, PPS, BPS, Running, Lateness, Verification, Errors, LatenessHistogram, StreamFrames, ReceiverFrames, ReceiverLost, ReceiverLatency}
	ReceiverDescs = []*prometheus.Desc{Running, ReceiverFrames, ReceiverLost, ReceiverLatency, ReceiverBytes, ReceiverDuplicated, ReceiverCorrupted, ReceiverUnsigned, ReceiverLatencyHist, ReceiverStreamFrames, ReceiverStreamLost}
)

// liveStats are the quantiles a running job's gauges give.
var liveStats = []string{"p50", "p99", "max"}

// MaxStreams bounds the per-stream series: a template of more streams
// (up to 65,535) exports none, so that one job cannot flood a Prometheus
// with series.
const MaxStreams = 64

// Bounds are the upper bounds of the histograms' buckets in seconds:
// 1, 2.5 and 5 times each power of ten from 100 ns to 10 s.
var Bounds = func() []float64 {
	var b []float64
	for p := 1e-7; p < 20; p *= 10 {
		for _, m := range []float64{1, 2.5, 5} {
			if v := p * m; v <= 10 {
				b = append(b, v)
			}
		}
	}
	return b
}()

// boundsNs are Bounds in nanoseconds.
var boundsNs = func() []int64 {
	out := make([]int64, len(Bounds))
	for i, b := range Bounds {
		out[i] = int64(b*1e9 + 0.5)
	}
	return out
}()

// histogram is h as a Prometheus histogram of desc (nil for an empty h).
func histogram(desc *prometheus.Desc, h *hist.Hist, labels []string) prometheus.Metric {
	n := h.Count()
	if n == 0 {
		return nil
	}
	cum := h.Cumulative(boundsNs)
	buckets := make(map[float64]uint64, len(Bounds))
	for i, b := range Bounds {
		buckets[b] = cum[i]
	}
	return prometheus.MustNewConstHistogram(desc, uint64(n), h.Mean()*float64(n)/1e9, buckets, labels...)
}

// histOf decodes a histogram in wpg's JSON form (nil for none).
func histOf(b []byte) *hist.Hist {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	var h hist.Hist
	if json.Unmarshal(b, &h) != nil {
		return nil
	}
	return &h
}

// stats sends the gauge desc for each stat of the quantiles (ns).
func stats(ch chan<- prometheus.Metric, desc *prometheus.Desc, l []string, names []string, ns ...int64) {
	for i, name := range names {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(ns[i])/1e9, append(l[:len(l):len(l)], name)...)
	}
}

// CollectSnapshot sends the metrics of a running job, labelled l (the
// values of JobLabels), from its snapshot s: the counters and rates, the
// pacing lateness (stats and histogram, paced runs), and what its own
// receivers (local paths) counted so far.
func CollectSnapshot(ch chan<- prometheus.Metric, l []string, s job.Snapshot) {
	if lat := s.Lateness; lat.Count > 0 {
		stats(ch, Lateness, l, liveStats, lat.P50Ns, lat.P99Ns, lat.MaxNs)
		if b, err := s.LatenessHistogram(); err == nil {
			if m := histogram(LatenessHistogram, histOf(b), l); m != nil {
				ch <- m
			}
		}
	}
	if r := s.Receiver; r != nil {
		ch <- prometheus.MustNewConstMetric(ReceiverFrames, prometheus.CounterValue, float64(r.Frames), l...)
		ch <- prometheus.MustNewConstMetric(ReceiverLost, prometheus.GaugeValue, float64(r.Lost), l...)
		if lat := r.Latency; lat.Count > 0 {
			stats(ch, ReceiverLatency, l, liveStats, lat.P50Ns, lat.P99Ns, lat.MaxNs)
		}
	}
	totals(ch, l, s.Frames, s.Bytes, s.PPS, s.BPS, 1)
	ch <- prometheus.MustNewConstMetric(Errors, prometheus.CounterValue, 0, l...)
}

// CollectReport sends the metrics of a job that has ended, labelled l,
// from its report r (nil: a job that never started, all zero): the
// totals, the pacing lateness (the report's stats and histogram), the
// receiver's verification, the workers that failed and the frames of each
// stream.
func CollectReport(ch chan<- prometheus.Metric, l []string, r *report.Report) {
	if r == nil {
		totals(ch, l, 0, 0, 0, 0, 0)
		return
	}
	if r.Rate != "" {
		stats(ch, Lateness, l, []string{"p50", "p99", "mean", "max"}, r.LatenessP50Ns, r.LatenessP99Ns, r.LatenessMeanNs, r.LatenessMaxNs)
		if m := histogram(LatenessHistogram, histOf(r.LatenessHistogram), l); m != nil {
			ch <- m
		}
	}
	verification(ch, l, r.Verification)
	failed := 0
	for _, w := range r.Workers {
		if w.Error != "" {
			failed++
		}
	}
	ch <- prometheus.MustNewConstMetric(Errors, prometheus.CounterValue, float64(failed), l...)
	if len(r.Streams) <= MaxStreams {
		for _, st := range r.Streams {
			ch <- prometheus.MustNewConstMetric(StreamFrames, prometheus.CounterValue, float64(st.Frames), append(l[:len(l):len(l)], strconv.Itoa(st.Stream), st.Name)...)
		}
	}
	totals(ch, l, r.Frames, r.Bytes, r.PPS, r.BPS, 0)
}

func totals(ch chan<- prometheus.Metric, l []string, frames, bytes uint64, pps, bps, up float64) {
	ch <- prometheus.MustNewConstMetric(Frames, prometheus.CounterValue, float64(frames), l...)
	ch <- prometheus.MustNewConstMetric(Bytes, prometheus.CounterValue, float64(bytes), l...)
	ch <- prometheus.MustNewConstMetric(PPS, prometheus.GaugeValue, pps, l...)
	ch <- prometheus.MustNewConstMetric(BPS, prometheus.GaugeValue, bps, l...)
	ch <- prometheus.MustNewConstMetric(Running, prometheus.GaugeValue, up, l...)
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
		ch <- prometheus.MustNewConstMetric(Verification, prometheus.CounterValue, m[k].(float64), append(l[:len(l):len(l)], k)...)
	}
}
