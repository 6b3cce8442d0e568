package afpacket

import "testing"

func TestTxGeometry(t *testing.T) {
	cases := []struct {
		frame, depth int
		bytes        int64
		want         Geometry
	}{
		{64, 0, 0, Geometry{Slot: 128, BlockSize: 64 << 10, Blocks: 8, Depth: 4096}},
		{1514, 4096, 16 << 20, Geometry{Slot: 2048, BlockSize: 64 << 10, Blocks: 128, Depth: 4096}},
		// 16 KiB slots under the 16 MiB cap: 1024 slots.
		{9000, 4096, 16 << 20, Geometry{Slot: 16384, BlockSize: 64 << 10, Blocks: 256, Depth: 1024}},
		{60, 10, 0, Geometry{Slot: 128, BlockSize: 4096, Blocks: 1, Depth: 32}},
		{65550, 4096, 16 << 20, Geometry{Slot: 131072, BlockSize: 131072, Blocks: 128, Depth: 128}},
	}
	for _, c := range cases {
		g, err := TxGeometry(c.frame, c.depth, c.bytes, 4096)
		if err != nil || g != c.want {
			t.Errorf("TxGeometry(%d, %d, %d) = %+v, %v; want %+v", c.frame, c.depth, c.bytes, g, err, c.want)
		}
		if g.Depth*g.Slot > g.Bytes() || g.BlockSize%g.Slot != 0 || g.BlockSize%4096 != 0 {
			t.Errorf("inconsistent %+v", g)
		}
	}
	if _, err := TxGeometry(9000, 4096, 8192, 4096); err == nil {
		t.Error("a ring smaller than one slot was accepted")
	}
}
