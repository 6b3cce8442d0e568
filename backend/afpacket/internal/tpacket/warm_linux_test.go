//go:build linux

package tpacket

import "testing"

// TestWarmLoadsEveryLine: warm reads the first byte of every 64-byte line
// and the last byte of the frame.
func TestWarmLoadsEveryLine(t *testing.T) {
	for _, n := range []int{256, 1500, 1514, 9000} {
		b := make([]byte, n)
		var want byte
		for off := 0; off < n; off += 64 {
			b[off] = byte(off/64 + 1)
			want ^= b[off]
		}
		b[n-1] ^= 0x80
		want ^= b[n-1]
		if got := warm(b); got != want {
			t.Errorf("%d bytes: warm = %#x, want %#x", n, got, want)
		}
	}
}
