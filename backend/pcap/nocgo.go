//go:build pcap && !cgo

package pcap

// The pcap backend is cgo code: -tags pcap with CGO_ENABLED=0 stops the
// build here, with the fix in the name of what is missing.
var _ = build_with_CGO_ENABLED_1_for_tags_pcap
