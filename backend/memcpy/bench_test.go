package memcpy

import (
	"context"
	"strconv"
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/frame"
)

func BenchmarkMemcpy(b *testing.B) {
	for _, size := range []int{64, 460800, 1 << 20} {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			src, _ := frame.NewPayloadSource(frame.PayloadConfig{Size: size, Verify: frame.VerifyOff}, 0, 1)
			s, _ := newSender(context.Background(), backend.Options{MaxFrame: src.MaxFrame(), Batch: 256})
			bufs := make([][]byte, 256)
			lens := make([]int, 256)
			b.SetBytes(int64(src.MaxFrame()))
			b.ReportAllocs()
			for done := 0; done < b.N; {
				n, _ := s.Reserve(bufs[:min(256, b.N-done)])
				m := src.Render(bufs[:n], lens[:n], 1)
				k, _ := s.Commit(lens[:m])
				done += k
			}
		})
	}
}
