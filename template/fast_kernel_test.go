package template

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestStreamKernelMatchesGo runs streamKernel (assembly on amd64) and
// streamKernelGo on the same random arguments and requires the same
// frames, lengths and counts: one frame size or several (16 to 300 bytes,
// odd ones, 64, whose image is kept in registers, often), buffers that
// hold the image already (skipped) or not, length fields, up to
// maxKernelFields fields of every width at every offset with random masks,
// bases and checksum coverage, the signature (at odd offsets too) or none,
// no checksum, one or two (the second covering the first or not), sums of
// every magnitude, both ways of writing a checksum of 0 (forced), and a
// buffer too short that stops the loop.
func TestStreamKernelMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	widths := []int{2, 4, 6, 8}
	size := func() int {
		if r.IntN(3) == 0 {
			return 64
		}
		return 16 + r.IntN(285)
	}
	for round := range 4000 {
		var sc runScratch
		k := &kernelArgs{seq: r.Uint64(), w: 1 + r.Uint64N(7), be: r.Uint64(), tsum: r.Uint64N(1 << 20),
			c0: -1, c1: -1, in1: allOnes(r.IntN(2) == 0)}
		k.sizes = []kernelSize{{n: size()}}
		if r.IntN(2) == 0 {
			for range r.IntN(5) {
				k.sizes = append(k.sizes, kernelSize{n: size()})
			}
			k.si = &sc.si
			for j := range sc.si {
				sc.si[j] = uint64(r.IntN(len(k.sizes)))
			}
		}
		minN, maxN := 1<<20, 0
		for i := range k.sizes {
			k.sizes[i].base0, k.sizes[i].base1 = r.Uint64()>>(2+r.IntN(40)), r.Uint64()>>(2+r.IntN(40))
			minN, maxN = min(minN, k.sizes[i].n), max(maxN, k.sizes[i].n)
		}
		k.size0 = k.sizes[0]
		k.img = make([]byte, maxN+r.IntN(3))
		for i := range k.img {
			k.img[i] = byte(r.Uint32())
		}
		if r.IntN(3) == 0 {
			k.skip = &sc.skip
			for j := range sc.skip {
				sc.skip[j] = uint64(r.IntN(2))
			}
		}
		if minN >= 20 && r.IntN(4) != 0 {
			k.sig, k.sighdr = 1, r.Uint32()
			k.smask0, k.smask1 = allOnes(r.IntN(2) == 0), allOnes(r.IntN(2) == 0)
		}
		if r.IntN(5) != 0 {
			k.c0 = r.IntN(minN - 1)
			if r.IntN(3) != 0 {
				k.c1 = r.IntN(minN - 1)
			}
		}
		if r.IntN(2) == 0 {
			k.z0 = 0xffff
		}
		if r.IntN(2) == 0 {
			k.z1 = 0xffff
		}
		for i := range r.IntN(maxKernelLens + 1) {
			k.lf[i] = lenField{off: 1 + r.IntN(minN-2), sub: r.IntN(minN)}
		}
		nf := r.IntN(maxKernelFields + 1)
		forced := round%5 == 0
		if forced {
			// Sums that fold to 0xffff: the checksums come out 0.
			nf, k.sig, k.in1 = 0, 0, 0
			for i := range k.sizes {
				k.sizes[i].base0, k.sizes[i].base1 = 0xffff*(1+r.Uint64N(1000)), 0xffff
			}
			k.size0 = k.sizes[0]
		}
		for i := range nf {
			wd := widths[r.IntN(len(widths))]
			if wd > minN {
				wd = 2
			}
			mask := r.Uint64()
			if wd < 8 {
				mask &= 1<<(8*wd) - 1
			}
			f := kernelField{vals: &sc.vals[i], off: r.IntN(minN - wd + 1), width: wd, mask: mask, base: r.Uint64() &^ mask,
				cmask0: allOnes(r.IntN(2) == 0), cmask1: allOnes(r.IntN(2) == 0)}
			if wd < 8 {
				f.base &= 1<<(8*wd) - 1
			}
			for j := range sc.vals[i] {
				sc.vals[i][j] = r.Uint64()
			}
			k.f[i] = f
		}
		m := r.IntN(runChunk + 1)
		short := -1
		if m > 0 && r.IntN(4) == 0 {
			short = r.IntN(m)
		}
		frameLen := func(j int) int {
			if k.si != nil {
				return k.sizes[sc.si[j]].n
			}
			return k.size0.n
		}
		caps := make([]int, m)
		for i := range caps {
			caps[i] = frameLen(i) + r.IntN(2)*32
			if i == short {
				caps[i] = frameLen(i) - 1
			}
		}
		mk := func() [][]byte {
			bufs := make([][]byte, m)
			for i := range bufs {
				bufs[i] = make([]byte, r.IntN(2)*caps[i], caps[i])
				for j := range bufs[i][:caps[i]] {
					bufs[i][:caps[i]][j] = byte(i + j)
				}
			}
			return bufs
		}
		a, g := mk(), mk()
		la, lg := make([]int, m), make([]int, m)
		na, ng := streamKernel(a, la, k), streamKernelGo(g, lg, k)
		if na != ng || !slices.Equal(la, lg) {
			t.Fatalf("round %d: streamKernel rendered %d frames, lengths %v; streamKernelGo %d, %v", round, na, la, ng, lg)
		}
		for i := range na {
			n := frameLen(i)
			if !bytes.Equal(a[i][:n], g[i][:n]) {
				t.Fatalf("round %d frame %d (n %d, %d fields, sig %d, c0 %d, c1 %d):\nstreamKernel   %x\nstreamKernelGo %x", round, i, n, nf, k.sig, k.c0, k.c1, a[i][:n], g[i][:n])
			}
		}
		if forced && na > 0 && k.c0 >= 0 && k.c1 < 0 {
			if got := binary.BigEndian.Uint16(a[0][:frameLen(0)][k.c0:]); got != uint16(k.z0) {
				t.Fatalf("round %d: a checksum of 0 written as %#x, want %#x", round, got, k.z0)
			}
		}
		if short >= 0 && na != short {
			t.Fatalf("round %d: stopped after %d frames, the short buffer is %d", round, na, short)
		}
	}
}
