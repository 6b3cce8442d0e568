// Package kubernetes holds wpg's Kubernetes manifests for segmented runs
// (docs/distributed.md): base/ (the senders' Indexed Job, one pod per
// segment, its template and a PodMonitor), receiver/ (the base and one
// wpg recv), overlays/dpdk/ (the senders on DPDK, with hugepages) and
// prometheus/ (a scrape job for a Prometheus without the operator).
//
// The package has no code: its test decodes every manifest strictly into
// the Kubernetes API types (k8s.io/api; a field those types do not know
// is an error) and checks what wpg relies on: --segment auto in an
// Indexed Job whose parallelism is its completions and WPG_SEGMENTS,
// Guaranteed QoS, the capabilities each backend needs and no more, and
// the metrics port that --metrics-listen, the container and the scrape
// configuration agree on.
package kubernetes
