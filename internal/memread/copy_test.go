package memread

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestCopyRandomSizesAndAlignments(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	src := make([]byte, 1<<20+256)
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	dst := make([]byte, len(src))
	sizes := []int{0, 1, 255, 256, 257, 4095, 4096, 4097, 4096 + 255, 65536, 1 << 20}
	for i := 0; i < 200; i++ {
		sizes = append(sizes, rng.IntN(1<<20))
	}
	for _, mode := range [][2]int{{1 << 30, 1 << 30}, {1 << 30, 0}, {0, 0}} { // rep movsb, AVX-512 regular stores, non-temporal stores
		c := AutoCopy()
		c.ERMSMax, c.NTThreshold = mode[0], mode[1]
		nt := mode[1]
		for _, n := range sizes {
			so, do := rng.IntN(129), rng.IntN(129)
			clear(dst)
			got := c.Copy(dst[do:do+n], src[so:so+n])
			if got != n || !bytes.Equal(dst[do:do+n], src[so:so+n]) {
				t.Fatalf("NTThreshold %d: Copy of %d bytes (src+%d, dst+%d) returned %d, data equal %v", nt, n, so, do, got, bytes.Equal(dst[do:do+n], src[so:so+n]))
			}
			// Nothing outside the destination was written.
			for _, b := range dst[:do] {
				if b != 0 {
					t.Fatalf("Copy of %d bytes wrote before dst", n)
				}
			}
			for _, b := range dst[do+n:] {
				if b != 0 {
					t.Fatalf("Copy of %d bytes wrote past dst", n)
				}
			}
		}
	}
	// Unequal lengths copy the shorter, like copy().
	if n := Copy(dst[:5000], src[:7000]); n != 5000 {
		t.Errorf("Copy(5000, 7000) = %d", n)
	}
}

func TestLookupCopy(t *testing.T) {
	if c, err := LookupCopy("go"); err != nil || c.How() != "Go copy() (runtime.memmove)" {
		t.Fatalf("LookupCopy(go): %v, %s", err, c.How())
	}
	if c, err := LookupCopy("auto"); err != nil || c != AutoCopy() {
		t.Fatalf("LookupCopy(auto): %v, %+v", err, c)
	}
	if _, err := LookupCopy("sse"); err == nil {
		t.Fatal("unknown copy accepted")
	}
}

func BenchmarkCopy(b *testing.B) {
	for _, size := range []int{64 << 10, 1 << 20, 16 << 20, 64 << 20, 256 << 20} {
		src, dst := make([]byte, size), make([]byte, size)
		for i := range src {
			src[i] = byte(i)
		}
		copy(dst, src)
		run := func(name string, f func()) {
			b.Run(fmt.Sprintf("%s/%d", name, size), func(b *testing.B) {
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					f()
				}
			})
		}
		run("runtime", func() { copy(dst, src) })
		c := AutoCopy()
		c.ERMSMax, c.NTThreshold = 1<<40, 1<<40
		run("erms", func() { c.Copy(dst, src) })
		c.ERMSMax = 0
		run("avx512", func() { c.Copy(dst, src) })
		c.NTThreshold = 0
		run("avx512nt", func() { c.Copy(dst, src) })
	}
}
