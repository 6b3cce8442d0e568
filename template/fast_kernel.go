package template

import (
	"encoding/binary"
	"math/bits"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/header"
)

// The streaming kernel: the common streamed stream's chunk in one loop.
//
// Most streamed streams vary a few whole fields (addresses, ports, VLAN
// ids, sequence numbers: slots of 2, 4, 6 or 8 bytes of their own), and
// perhaps the frame size, and have one or two checksums (the L4 one and
// the IPv4 header's), neither meant to be wrong. For them runStream
// computes the chunk's sizes and each field's values (cursor.fill, one
// loop each), and then one loop, streamKernel, writes every frame: the
// image (unless the buffer holds it), the length fields, the fields, the
// signature, the checksums finished from the size's base sums and the
// fields' shares, the length; in assembly on amd64 (fast_amd64.s) with every value
// in a register, else streamKernelGo, which is also what the assembly is
// tested against (TestStreamKernelMatchesGo). The bytes are renderStream's
// (TestStreamRunMatchesRenderStream).

// maxKernelFields bounds the varying fields the kernel writes, and
// maxKernelLens the length fields.
const (
	maxKernelFields = 8
	maxKernelLens   = 6
)

// kernelArgs are what streamKernel reads besides the buffers: the chunk's
// first sequence word, its time and its sizes, and what compile time
// fixed.
type kernelArgs struct {
	img   []byte     // the image, as long as the largest frame
	size0 kernelSize // the frame size, when it does not vary
	// sizes are the distinct sizes and si, when not nil, each frame's
	// index into them.
	sizes []kernelSize
	si    *[runChunk]uint64
	// skip, when not nil, marks the frames whose buffers hold the image
	// already (KeepFrames): the image is not copied.
	skip *[runChunk]uint64
	seq  uint64 // the first frame's sequence word (k | the worker tag)
	w    uint64 // the stride of seq
	be   uint64 // the time, byte-swapped: stored as is, it is big-endian
	tsum uint64 // the time's share of a checksum (header.Word64Sum)
	sig  uint64 // 1: the frames end in a signature
	// sighdr is the signature's magic and stream id, byte-swapped, written
	// when the size varies (the image holds them at the largest size).
	sighdr uint32
	// smask0 and smask1 are all ones when the first or the second
	// checksum covers the signature, else 0.
	smask0, smask1 uint64
	c0, c1         int    // the checksums' fields, -1 for none (c1 only with c0)
	z0, z1         uint64 // what each writes for a checksum of 0: 0xffff for UDP, else 0
	in1            uint64 // all ones when the second checksum covers the first
	// lf are the length fields (when the size varies), up to the first at
	// offset 0; f the varying fields, up to the first of width 0.
	lf [maxKernelLens + 1]lenField
	f  [maxKernelFields + 1]kernelField
}

// kernelSize is a frame size and the checksums' base sums at that size.
type kernelSize struct {
	n            int
	base0, base1 uint64
}

// kernelField is a varying field the kernel writes: the chunk's values at
// vals (already shifted to the field's place in its slot), masked with
// mask, ORed into the slot's other bits base, and stored big-endian in the
// width bytes at off; its checksum share added to the first and second
// checksum's sums under cmask0 and cmask1 (all ones or 0).
type kernelField struct {
	vals           *[runChunk]uint64
	off, width     int
	mask, base     uint64
	cmask0, cmask1 uint64
}

// planKernel readies the kernel for a streamed stream it can render:
// frames of at least 16 bytes, at most maxKernelFields varying fields of
// slots of their own and maxKernelLens length fields, at most two
// checksums finished per frame, neither meant to be wrong.
func (cs *cstream) planKernel(sc *runScratch) {
	cs.kern = nil
	if cs.many || len(cs.fields) > maxKernelFields || len(cs.lens) > maxKernelLens || cs.c0bad || cs.c1bad {
		return
	}
	k := &kernelArgs{img: cs.img, w: cs.w, c0: cs.c0, c1: cs.c1, in1: allOnes(cs.c0in1)}
	minN := len(cs.img)
	for _, se := range cs.sizes {
		k.sizes = append(k.sizes, kernelSize{n: se.n, base0: se.sums[0], base1: se.sums[1]})
		minN = min(minN, se.n)
	}
	k.size0 = k.sizes[0]
	if cs.sizeVar {
		k.si = &sc.si
	}
	if minN < 16 || minN > len(cs.img) {
		return
	}
	if cs.sig {
		k.sig = 1
		k.sighdr = bits.ReverseBytes32(uint32(frame.SignatureMagic)<<16 | uint32(cs.id))
		k.smask0, k.smask1 = allOnes(cs.sigCov&1 != 0), allOnes(cs.sigCov&2 != 0)
		if minN < frame.SignatureLen {
			return
		}
	}
	within := func(off, width int) bool { return off >= 0 && off+width <= minN }
	if k.c0 >= 0 && !within(k.c0, 2) || k.c1 >= 0 && (k.c0 < 0 || !within(k.c1, 2)) {
		return
	}
	if cs.c0udp {
		k.z0 = 0xffff
	}
	if cs.c1udp {
		k.z1 = 0xffff
	}
	for i, l := range cs.lens {
		if l.off <= 0 || !within(l.off, 2) {
			return
		}
		k.lf[i] = l
	}
	for i := range cs.fields {
		f := &cs.fields[i]
		if f.rmw || !within(f.off, f.width) || f.width != 2 && f.width != 4 && f.width != 6 && f.width != 8 {
			return
		}
		k.f[i] = kernelField{vals: &sc.vals[i], off: f.off, width: f.width, mask: f.mask, base: f.base,
			cmask0: allOnes(f.cov&1 != 0), cmask1: allOnes(f.cov&2 != 0)}
	}
	cs.kern = k
}

// allOnes is ^0 for true, 0 for false.
func allOnes(b bool) uint64 {
	if b {
		return ^uint64(0)
	}
	return 0
}

// kernelChunk is runStream's chunk through the kernel: the sizes and the
// fields' values, which buffers hold the image (KeepFrames), then every
// frame in one loop.
func (cs *cstream) kernelChunk(bufs [][]byte, lens []int, now, nowSum uint64) {
	m := len(bufs)
	sc := cs.scr
	k := cs.kern
	if cs.sizeVar {
		cs.sizeCur.fill(sc.si[:m])
	}
	for i := range cs.fields {
		f := &cs.fields[i]
		v := sc.vals[i][:m]
		f.c.fill(v)
		if f.shift != 0 {
			for j := range v {
				v[j] <<= f.shift
			}
		}
	}
	k.skip = nil
	switch {
	case cs.memo != nil && len(cs.img) < KeepMin:
		// Frames below KeepMin: copied whole (cheaper than the look-up)
		// and not remembered.
		cs.memo.forgetAll(bufs)
	case cs.memo != nil:
		k.skip = &sc.skip
		for j, b := range bufs {
			si := 0
			if cs.sizeVar {
				si = int(sc.si[j&(runChunk-1)])
			}
			sc.skip[j&(runChunk-1)] = 0
			if cs.memo.primed(b[:cs.sizes[si].n], streamTag(cs.id, si)) {
				sc.skip[j&(runChunk-1)] = 1
			}
		}
	}
	k.seq, k.be, k.tsum = cs.k|cs.seqTag, bits.ReverseBytes64(now), nowSum
	done := streamKernel(bufs, lens[:m], k)
	cs.k += cs.w * uint64(done)
	if done < m {
		// A buffer shorter than its frame: renderStream's panic.
		_ = bufs[done][:lens[done]]
	}
}

// streamKernelGo renders len(bufs) frames into bufs as k says and stores
// their lengths in lens (len(lens) >= len(bufs) <= runChunk); it stops at
// the first buffer with a capacity under its frame's size, whose length it
// has stored, and returns the frames rendered. streamKernel is the same in
// assembly on amd64.
func streamKernelGo(bufs [][]byte, lens []int, k *kernelArgs) int {
	seq := k.seq
	for j, b := range bufs {
		sz := &k.size0
		if k.si != nil {
			sz = &k.sizes[k.si[j&(runChunk-1)]]
		}
		n := sz.n
		lens[j] = n
		if cap(b) < n {
			return j
		}
		b = b[:n]
		if k.skip == nil || k.skip[j&(runChunk-1)] == 0 {
			copy(b, k.img[:n])
		}
		for i := 0; k.lf[i].off != 0; i++ {
			binary.BigEndian.PutUint16(b[k.lf[i].off:], uint16(n-k.lf[i].sub))
		}
		s0, s1 := sz.base0, sz.base1
		for i := 0; k.f[i].width != 0; i++ {
			f := &k.f[i]
			v := f.vals[j&(runChunk-1)] & f.mask
			storeSlot(b, f.off, f.width, f.base|v)
			if f.width == 8 {
				v = v>>32 + v&0xffffffff
			}
			s0 += v & f.cmask0
			s1 += v & f.cmask1
		}
		if k.sig != 0 {
			g := b[n-frame.SignatureLen:]
			if k.si != nil {
				binary.LittleEndian.PutUint32(g, k.sighdr)
			}
			binary.BigEndian.PutUint64(g[4:], seq)
			binary.LittleEndian.PutUint64(g[12:], k.be)
			ss := seq>>32 + seq&0xffffffff + k.tsum
			if n&1 != 0 { // the signature at an odd offset
				ss = uint64(header.Swap16(header.Fold(ss)))
			}
			s0 += ss & k.smask0
			s1 += ss & k.smask1
		}
		seq += k.w
		if k.c0 >= 0 {
			x := finishSum(s0, false)
			if x == 0 {
				x = uint16(k.z0)
			}
			binary.BigEndian.PutUint16(b[k.c0:], x)
			if k.c1 >= 0 {
				s1 += uint64(x) & k.in1
				y := finishSum(s1, false)
				if y == 0 {
					y = uint16(k.z1)
				}
				binary.BigEndian.PutUint16(b[k.c1:], y)
			}
		}
	}
	return len(bufs)
}
