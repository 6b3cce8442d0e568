package afpacket

import (
	"strings"
	"testing"
)

// Issue #17 item 8: --ring-depth 3 silently became 32; the ring now says
// what it did and why.
func TestGeometryAdjustment(t *testing.T) {
	for _, c := range []struct {
		frame, depth int
		bytes        int64
		want         []string // "" = no adjustment
	}{
		{64, 0, 0, nil},
		{64, 4096, 16 << 20, nil},
		{60, 3, 0, []string{"--ring-depth 3 raised to 32", "4096", "32 slots of 128 bytes"}},
		{64, 100, 0, []string{"--ring-depth 100 lowered to 96", "multiple of 32"}},
		{9000, 4096, 16 << 20, []string{"--ring-depth 4096 capped to 1024", "--ring-bytes 16777216", "16384 bytes", "raise --ring-bytes"}},
	} {
		g, err := TxGeometry(c.frame, c.depth, c.bytes, 4096)
		if err != nil {
			t.Fatal(err)
		}
		got := g.Adjustment(c.depth, c.bytes)
		if (got == "") != (c.want == nil) {
			t.Errorf("TxGeometry(%d, %d, %d) depth %d: adjustment %q, want one: %v", c.frame, c.depth, c.bytes, g.Depth, got, c.want != nil)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("TxGeometry(%d, %d, %d): %q lacks %q", c.frame, c.depth, c.bytes, got, w)
			}
		}
	}
}
