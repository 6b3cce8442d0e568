//go:build linux

package pipe

import (
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/peer/peertest"
)

func BenchmarkPipe(b *testing.B) {
	peertest.BenchSizes(b, "pipe", backend.Options{}, 64, 460800, 1<<20, 64<<20)
}

func BenchmarkPipeVmsplice(b *testing.B) {
	peertest.BenchSizes(b, "pipe", backend.Options{Pipe: backend.PipeOptions{Vmsplice: true}}, 460800, 1<<20, 64<<20)
}
