package metrics

import (
	"encoding/json"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wpg-dev/wpg/internal/hist"
	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/recv"
)

// Run is a prometheus.Collector of one sending run, labelled with the
// values of JobLabels: its snapshot while it runs (CollectSnapshot), its
// report once it has ended (CollectReport).
type Run struct {
	run    *job.Run
	labels []string
}

// NewRun returns the collector of run; labels are the values of JobLabels.
func NewRun(run *job.Run, labels ...string) *Run { return &Run{run: run, labels: labels} }

// Describe implements prometheus.Collector.
func (c *Run) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range RunDescs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Run) Collect(ch chan<- prometheus.Metric) {
	select {
	case <-c.run.Done():
		CollectReport(ch, c.labels, c.run.Report())
	default:
		CollectSnapshot(ch, c.labels, c.run.Snapshot())
	}
}

// Receiver is a prometheus.Collector of one receiver (wpg recv): give it
// the receive loop's progress (Update, from job.Reception.Wait's progress
// function) and, at the end, the result (Finish). It counts what the
// progress says (frames, bytes, lost, duplicated, corrupted, without
// signature), the latency histogram from the windows the progress calls
// carry, and once finished the result's, whose histogram it takes whole,
// with the per-stream counts. It is safe for concurrent use.
type Receiver struct {
	labels []string

	mu   sync.Mutex
	p    recv.Progress
	lat  *hist.Hist
	res  *recv.Result
	done bool
}

// NewReceiver returns the collector of one receiver; labels are the
// values of JobLabels.
func NewReceiver(labels ...string) *Receiver {
	return &Receiver{labels: labels}
}

// Update records a progress call of the receive loop: its totals, and the
// latency of its window added to the histogram.
func (r *Receiver) Update(p recv.Progress) {
	w := latencyWindow(p)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	r.p = p
	if w != nil {
		if r.lat == nil {
			r.lat = w
		} else {
			r.lat.Merge(w)
		}
	}
}

func latencyWindow(p recv.Progress) *hist.Hist {
	b, err := p.MarshalLatency()
	if err != nil {
		return nil
	}
	return histOf(b)
}

// Finish records the receiver's result: from now on the metrics are its.
func (r *Receiver) Finish(res recv.Result) {
	var peer struct {
		Hist json.RawMessage `json:"latency_histogram"`
	}
	var lat *hist.Hist
	if b, err := res.MarshalPeer(); err == nil && json.Unmarshal(b, &peer) == nil {
		lat = histOf(peer.Hist)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.res, r.done = &res, true
	r.p = recv.Progress{Frames: res.Frames, Bytes: res.Bytes, Lost: res.Lost, Duplicated: res.Duplicated, Corrupted: res.Corrupted, Unsigned: res.Unsigned}
	if lat != nil || res.Latency == nil {
		r.lat = lat
	}
}

// Describe implements prometheus.Collector.
func (r *Receiver) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range ReceiverDescs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (r *Receiver) Collect(ch chan<- prometheus.Metric) {
	r.mu.Lock()
	p, res, done := r.p, r.res, r.done
	var lat *hist.Hist
	if r.lat != nil {
		lat = r.lat.Clone()
	}
	r.mu.Unlock()
	l := r.labels
	counter := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), l...)
	}
	counter(ReceiverFrames, p.Frames)
	counter(ReceiverBytes, p.Bytes)
	counter(ReceiverDuplicated, p.Duplicated)
	counter(ReceiverCorrupted, p.Corrupted)
	counter(ReceiverUnsigned, p.Unsigned)
	ch <- prometheus.MustNewConstMetric(ReceiverLost, prometheus.GaugeValue, float64(p.Lost), l...)
	up := 1.0
	if done {
		up = 0
	}
	ch <- prometheus.MustNewConstMetric(Running, prometheus.GaugeValue, up, l...)
	if lat.Count() > 0 {
		stats(ch, ReceiverLatency, l, liveStats, lat.Quantile(50), lat.Quantile(99), lat.Max())
		ch <- histogram(ReceiverLatencyHist, lat, l)
	}
	if res != nil && len(res.Streams) <= MaxStreams {
		for _, s := range res.Streams {
			sl := append(l[:len(l):len(l)], strconv.Itoa(int(s.Stream)))
			ch <- prometheus.MustNewConstMetric(ReceiverStreamFrames, prometheus.CounterValue, float64(s.Frames), sl...)
			ch <- prometheus.MustNewConstMetric(ReceiverStreamLost, prometheus.GaugeValue, float64(s.Lost), sl...)
		}
	}
}
