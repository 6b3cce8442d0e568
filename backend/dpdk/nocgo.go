//go:build dpdk && !cgo

package dpdk

// The dpdk backend is cgo code: -tags dpdk with CGO_ENABLED=0 stops the
// build here, with the fix in the name of what is missing.
var _ = build_with_CGO_ENABLED_1_for_tags_dpdk
