package afxdp_test

import (
	"fmt"

	"github.com/wpg-dev/wpg/backend/afxdp"
)

// A sender's UMEM: one chunk per TX ring slot, the ring a power of two
// capped by --ring-bytes.
func ExampleTxGeometry() {
	for _, c := range []struct {
		frame, depth int
		ringBytes    int64
	}{
		{64, 4096, 16 << 20},  // the defaults
		{1514, 4096, 1 << 20}, // --ring-bytes 1MiB
		{1514, 3000, 16 << 20},
	} {
		g, adjusted, err := afxdp.TxGeometry(c.frame, c.depth, c.ringBytes, 4096)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%d B frames: %d chunks of %d B, UMEM %d KiB", c.frame, g.Depth, g.Chunk, g.UMEMBytes()>>10)
		if adjusted != "" {
			fmt.Printf(" (%s)", adjusted)
		}
		fmt.Println()
	}
	// Output:
	// 64 B frames: 4096 chunks of 2048 B, UMEM 8192 KiB
	// 1514 B frames: 512 chunks of 2048 B, UMEM 1024 KiB (--ring-depth 4096 capped to 512: --ring-bytes 1048576 holds 512 UMEM chunks of 2048 bytes (the ring is a power of two); raise --ring-bytes (tx.ring_bytes) for more)
	// 1514 B frames: 2048 chunks of 2048 B, UMEM 4096 KiB (--ring-depth 3000 lowered to 2048: AF_XDP rings are powers of two)
}
