package afxdp

import (
	"strings"
	"testing"
)

func TestTxGeometry(t *testing.T) {
	for _, c := range []struct {
		frame, depth int
		bytes        int64
		chunk, want  int
		adjusted     string
	}{
		{64, 0, 0, 2048, 4096, ""},
		{1514, 4096, 16 << 20, 2048, 4096, ""},
		{1514, 4096, 1 << 20, 2048, 512, "capped to 512"},
		{1514, 3000, 16 << 20, 2048, 2048, "lowered to 2048"},
		{3000, 4096, 16 << 20, 4096, 4096, ""},
		{64, 2, 0, 2048, 8, "raised to 8"},
	} {
		g, adj, err := TxGeometry(c.frame, c.depth, c.bytes, 4096)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if g.Chunk != c.chunk || g.Depth != c.want || (c.adjusted == "") != (adj == "") || !strings.Contains(adj, c.adjusted) {
			t.Errorf("%+v: got %+v %q", c, g, adj)
		}
		if g.UMEMBytes() > max(c.bytes, DefaultRingBytes) {
			t.Errorf("%+v: UMEM %d over the cap", c, g.UMEMBytes())
		}
	}
	if _, _, err := TxGeometry(9000, 0, 0, 4096); err == nil || !strings.Contains(err.Error(), "at most 4096") {
		t.Errorf("jumbo frame: %v", err)
	}
	if _, _, err := TxGeometry(64, 0, 4096, 4096); err == nil || !strings.Contains(err.Error(), "--ring-bytes") {
		t.Errorf("tiny ring-bytes: %v", err)
	}
}

func TestRxGeometry(t *testing.T) {
	chunk, n, err := RxGeometry(1500, 16<<20, 4096)
	if err != nil || chunk != 2048 || n != 8192 {
		t.Errorf("MTU 1500: %d × %d, %v", n, chunk, err)
	}
	if chunk, _, err = RxGeometry(3000, 0, 4096); err != nil || chunk != 4096 {
		t.Errorf("MTU 3000: chunk %d, %v", chunk, err)
	}
	if _, _, err = RxGeometry(9000, 0, 4096); err == nil || !strings.Contains(err.Error(), "ip link set") {
		t.Errorf("MTU 9000: %v", err)
	}
}
