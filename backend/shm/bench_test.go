//go:build linux

package shm

import (
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/peer/peertest"
)

func BenchmarkShm(b *testing.B) {
	peertest.BenchSizes(b, "shm", backend.Options{}, 64, 460800, 1<<20, 64<<20)
}
