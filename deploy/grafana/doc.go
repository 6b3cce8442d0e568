// Package grafana holds wpg.json, a Grafana dashboard over wpg's
// Prometheus metrics (package metrics; docs/api.md, docs/distributed.md):
// frame and bit rates, pacing lateness and one-way latency percentiles,
// loss, duplicates and corruption, per job and per segment, with the
// Prometheus data source, the jobs and the segments as variables.
//
// The package has no code: its test reads every PromQL expression of the
// dashboard and checks that each metric and label it queries is one wpg
// exports (the descriptors of package metrics, the segment label a run's
// endpoint adds, a histogram's le), and, where promtool is installed, that
// every expression parses.
package grafana
