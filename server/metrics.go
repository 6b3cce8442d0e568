package server

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/wpg-dev/wpg/metrics"
)

// jobCollector reads the running jobs, and the finished ones this process
// still shows, at each scrape: snapshots are atomics only. The metrics
// and their names are package metrics', shared with the --metrics-listen
// endpoint of wpg send and wpg recv.
type jobCollector struct{ s *Server }

func (c jobCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- metrics.JobsRunning
	for _, d := range metrics.RunDescs {
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
	ch <- prometheus.MustNewConstMetric(metrics.JobsRunning, prometheus.GaugeValue, float64(running))
	seen := map[int64]bool{}
	for _, e := range entries {
		if seen[e.id] {
			continue
		}
		seen[e.id] = true
		l := []string{strconv.FormatInt(e.id, 10), e.name, e.spec.BackendName()}
		select {
		case <-e.done:
			metrics.CollectReport(ch, l, e.report)
		default:
			metrics.CollectSnapshot(ch, l, e.run.Snapshot())
		}
	}
}

// newRegistry is the server's private registry: the jobs, plus the
// process and Go runtime collectors.
func (s *Server) newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(jobCollector{s}, collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	return reg
}
