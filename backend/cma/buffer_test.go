//go:build linux

package cma

import (
	"testing"

	"github.com/wpg-dev/wpg/internal/sys"
)

// TestAllocBuffer: the buffers the kernel copies from and into hold
// exactly the bytes asked, are writable and close once; from hugeMin bytes
// they start on a 2 MiB boundary, so that transparent huge pages can back
// them.
func TestAllocBuffer(t *testing.T) {
	for _, size := range []int{1, 4096, hugeMin, 2 * 462848, 2<<20 + 4096} {
		b, err := allocBuffer(size, "test buffer")
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		m := b.Bytes()
		if len(m) != size || cap(m) != size {
			t.Fatalf("%d bytes: len %d cap %d", size, len(m), cap(m))
		}
		if a := sys.AddrOf(m); size >= hugeMin && a%hugeSize != 0 {
			t.Fatalf("%d bytes at %#x: not 2 MiB aligned", size, a)
		}
		m[0], m[size-1] = 1, 2
		if err := b.Close(); err != nil {
			t.Fatalf("%d bytes: close: %v", size, err)
		}
		if err := b.Close(); err != nil || b.Bytes() != nil {
			t.Fatalf("%d bytes: second close %v, bytes %v", size, err, b.Bytes() != nil)
		}
	}
	if _, err := allocBuffer(0, "empty buffer"); err == nil {
		t.Fatal("0 bytes: no error")
	}
	var none *buffer
	if none.Bytes() != nil || none.Close() != nil {
		t.Fatal("nil buffer: Bytes or Close misbehaves")
	}
}
