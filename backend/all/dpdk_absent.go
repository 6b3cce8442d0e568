//go:build !(dpdk && linux && cgo)

package all

import "github.com/wpg-dev/wpg/backend"

// Without its build tag the dpdk backend is left out; the registry still
// knows it (backend.Known) and says how to get it.
func init() {
	backend.RegisterAbsent("dpdk", "it is cgo code behind a build tag: build wpg with -tags dpdk (needs libdpdk-dev)")
}
