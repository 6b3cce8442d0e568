//go:build linux

package sys

import "testing"

// TestAllocHuge: the buffers the kernel copies from and into hold exactly
// the bytes asked, are writable and close once; from HugeMin bytes they
// start on a 2 MiB boundary, so that transparent huge pages can back them,
// and Close unmaps the whole aligned span.
func TestAllocHuge(t *testing.T) {
	for _, size := range []int{1, 4096, HugeMin, 2 * 462848, 2<<20 + 4096} {
		m, err := AllocHuge(size, "test buffer")
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		b := m.Bytes()
		if len(b) != size || cap(b) != size {
			t.Fatalf("%d bytes: len %d cap %d", size, len(b), cap(b))
		}
		if a := AddrOf(b); size >= HugeMin && a%HugePageSize != 0 {
			t.Fatalf("%d bytes at %#x: not 2 MiB aligned", size, a)
		}
		b[0], b[size-1] = 1, 2
		if err := m.Close(); err != nil {
			t.Fatalf("%d bytes: close: %v", size, err)
		}
		if err := m.Close(); err != nil || m.Bytes() != nil {
			t.Fatalf("%d bytes: second close %v, bytes %v", size, err, m.Bytes() != nil)
		}
	}
	if _, err := AllocHuge(0, "empty buffer"); err == nil {
		t.Fatal("0 bytes: no error")
	}
	var none *Mapping
	if none.Bytes() != nil || none.Close() != nil {
		t.Fatal("nil mapping: Bytes or Close misbehaves")
	}
}
