//go:build linux

package unix

import (
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/peer/peertest"
)

func BenchmarkUnix(b *testing.B) {
	peertest.BenchSizes(b, "unix", backend.Options{}, 64, 460800, 1<<20, 64<<20)
}
