//go:build linux

package cma

import (
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/peer/peertest"
)

func BenchmarkCma(b *testing.B) {
	for _, size := range []int{64, 460800, 1 << 20, 64 << 20} {
		for _, v := range []frame.VerifyMode{frame.VerifyOn, frame.VerifyOff} {
			b.Run(peertest.SizeName(size)+"/verify-"+v.String(), func(b *testing.B) {
				peertest.Bench(b, "cma", backend.Options{}, size, v)
			})
		}
	}
}
