//go:build linux

package cma

import (
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/peer/peertest"
)

func BenchmarkCma(b *testing.B) {
	peertest.BenchSizes(b, "cma", backend.Options{}, 64, 460800, 1<<20, 64<<20)
}
