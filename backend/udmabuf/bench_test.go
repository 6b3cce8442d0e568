//go:build linux

package udmabuf

import (
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/peer/peertest"
)

// BenchmarkStandIn runs the data path on the stand-in device (a file
// mapping with manual sync through fake sysfs attributes that write to
// /dev/null): the cost of the ring, the sync calls and the verification,
// not of a DMA buffer.
func BenchmarkStandIn(b *testing.B) {
	d := standIn(b, 16<<20, map[string]string{"sync_for_cpu": "@null", "sync_for_device": "@null"})
	peertest.BenchSizes(b, "udmabuf", backend.Options{Device: d}, 64, 4096, 1<<20)
}
