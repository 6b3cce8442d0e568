//go:build !(pcap && linux && cgo)

package all

import "github.com/wpg-dev/wpg/backend"

// Without its build tag the pcap backend is left out; the registry still
// knows it (backend.Known) and says how to get it.
func init() {
	backend.RegisterAbsent("pcap", "it is cgo code behind a build tag: build wpg with -tags pcap (needs libpcap-dev)")
}
