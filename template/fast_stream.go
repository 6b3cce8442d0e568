package template

import (
	"encoding/binary"
	"math/bits"

	"github.com/wpg-dev/wpg/frame"
)

// The streaming run loop: a run of one streamed stream's frames in passes
// over the batch instead of renderStream per frame.
//
// renderStream does everything for one frame, and so decides everything
// once per frame: the size, whether the buffer holds the image, each
// field's kind, width and checksums, the signature, every checksum; its
// state lives in the cstream, in memory, and a 64-byte frame took about
// 400 instructions. runStream renders a chunk of up to runChunk frames in
// passes, each deciding once: the sizes of the chunk (one pass of the size
// cursor), the images and the base sums (one pass), then each varying
// field in a pass of its own (its values, then their stores and their
// share of each checksum covering it), then the signature and the
// checksums (one pass). The per-frame state between passes (each frame's
// checksum sums, a field's values, the sizes) is in runScratch, a few KiB
// the Source's streamed streams share. The bytes are renderStream's, byte
// for byte, and the streams' state (packet index, cursors) advances the
// same, so the two can take turns (TestStreamRunMatchesRenderStream).

// runChunk is the most frames one pass covers: the scratch of a chunk
// stays in L1.
const runChunk = 64

// runScratch is the per-frame state of a chunk: the sums of the checksums
// finished per frame (by position in cstream.rck), a field's values (then
// their checksum share) and each frame's size index.
type runScratch struct {
	sum  [maxCks][runChunk]uint64
	val  [runChunk]uint64
	si   [runChunk]uint64
	vals [maxKernelFields][runChunk]uint64 // the kernel's fields' values (fast_kernel.go)
	skip [runChunk]uint64                  // the kernel's frames whose buffer holds the image
}

// runStream renders len(bufs) frames of the streamed stream into bufs,
// their lengths into lens.
func (cs *cstream) runStream(bufs [][]byte, lens []int, now, nowSum uint64) {
	for len(bufs) > runChunk {
		cs.streamChunk(bufs[:runChunk], lens[:runChunk], now, nowSum)
		bufs, lens = bufs[runChunk:], lens[runChunk:]
	}
	cs.streamChunk(bufs, lens[:len(bufs)], now, nowSum)
}

// streamChunk renders one chunk (len(bufs) <= runChunk, len(lens) ==
// len(bufs)): renderStream's steps, in its order, each a pass over the
// chunk: the sizes, the images, each field, the signature, each checksum.
func (cs *cstream) streamChunk(bufs [][]byte, lens []int, now, nowSum uint64) {
	m := len(bufs)
	if m == 0 {
		return
	}
	if cs.kern != nil {
		cs.kernelChunk(bufs, lens, now, nowSum) // fast_kernel.go
		return
	}
	sc := cs.scr
	if cs.sizeVar {
		cs.sizeCur.fill(sc.si[:m])
	}
	cs.images(bufs, lens, sc)
	for i := range cs.fields {
		f := &cs.fields[i]
		v := sc.val[:m]
		f.c.fill(v)
		f.put(bufs, v)
		sc.add(f.cov, m)
	}
	if cs.sig {
		cs.sign(bufs, lens, now, nowSum, sc)
		sc.add(cs.sigCov, m)
	} else {
		cs.k += cs.w * uint64(m)
	}
	cs.finish(bufs, sc)
}

// add adds the first m values of val to the sums of the checksums in cov.
func (sc *runScratch) add(cov uint8, m int) {
	v := sc.val[:m]
	for c := cov; c != 0; c &= c - 1 {
		s := sc.sum[bits.TrailingZeros8(c)&(maxCks-1)][:m]
		for j, x := range v {
			s[j] += x
		}
	}
}

// images is renderStream's first step for a chunk: each frame's image
// (unless its buffer holds it from an earlier lap), its length fields
// (varying sizes), its length, and its checksums' base sums.
func (cs *cstream) images(bufs [][]byte, lens []int, sc *runScratch) {
	lens = lens[:len(bufs)]
	nck := len(cs.rck)
	if !cs.sizeVar {
		se := &cs.sizes[0]
		n := se.n
		s0, s1 := se.sums[0], se.sums[1]
		sum0, sum1 := sc.sum[0][:len(bufs)], sc.sum[1][:len(bufs)]
		if n == 64 && cs.memo == nil && len(cs.img) == 64 {
			// The classic size: four 16-byte moves (an array assignment
			// of 64 bytes calls memmove).
			img := (*[64]byte)(cs.img)
			for j, b := range bufs {
				d := (*[64]byte)(b)
				*(*[16]byte)(d[0:16]) = *(*[16]byte)(img[0:16])
				*(*[16]byte)(d[16:32]) = *(*[16]byte)(img[16:32])
				*(*[16]byte)(d[32:48]) = *(*[16]byte)(img[32:48])
				*(*[16]byte)(d[48:64]) = *(*[16]byte)(img[48:64])
				lens[j] = 64
				sum0[j], sum1[j] = s0, s1
			}
		} else {
			img := cs.img[:n]
			tag := streamTag(cs.id, 0)
			for j, b := range bufs {
				b = b[:n]
				if cs.memo == nil || !cs.memo.primed(b, tag) {
					copy(b, img)
				}
				lens[j] = n
				sum0[j], sum1[j] = s0, s1
			}
		}
		for k := 2; k < nck; k++ {
			x, s := se.sums[k], sc.sum[k&(maxCks-1)][:len(bufs)]
			for j := range s {
				s[j] = x
			}
		}
		return
	}
	si := sc.si[:len(bufs)]
	for j, b := range bufs {
		se := &cs.sizes[si[j]]
		n := se.n
		b = b[:n]
		if cs.memo == nil || !cs.memo.primed(b, streamTag(cs.id, int(si[j]))) {
			copy(b, cs.img[:n])
		}
		for _, f := range cs.lens {
			binary.BigEndian.PutUint16(b[f.off:], uint16(n-f.sub))
		}
		lens[j] = n
		for k := range nck {
			sc.sum[k&(maxCks-1)][j&(runChunk-1)] = se.sums[k]
		}
	}
}

// put writes the field's values v (the cursor's) into the chunk's frames
// and leaves in v each one's share of a checksum covering the field.
func (f *pfield) put(bufs [][]byte, v []uint64) {
	v = v[:len(bufs)]
	off, shift, mask, base, width := f.off, f.shift, f.mask, f.base, f.width
	switch {
	case f.rmw:
		// The slot is shared with another varying field: keep its bits.
		for j, b := range bufs {
			x := (v[j] << shift) & mask
			storeSlot(b, off, width, loadSlot(b, off, width)&^mask|x)
			v[j] = ckShare(x, width)
		}
	case width == 2:
		for j, b := range bufs {
			x := (v[j] << shift) & mask
			binary.BigEndian.PutUint16(b[off:], uint16(base|x))
			v[j] = x
		}
	case width == 4:
		for j, b := range bufs {
			x := (v[j] << shift) & mask
			binary.BigEndian.PutUint32(b[off:], uint32(base|x))
			v[j] = x
		}
	default:
		for j, b := range bufs {
			x := (v[j] << shift) & mask
			storeSlot(b, off, width, base|x)
			v[j] = ckShare(x, width)
		}
	}
}

// ckShare is a field value's share of a checksum: the value itself when it
// has at most 48 bits (a chunk's sums cannot overflow), else the sum of its
// 32-bit halves. The fold makes either the same as the sum of its 16-bit
// words (header.Word64Sum): equal modulo 0xffff, and 0 only for 0.
func ckShare(x uint64, width int) uint64 {
	if width > 6 {
		return x>>32 + x&0xffffffff
	}
	return x
}

// sign is renderStream's signature step for a chunk: each frame's
// signature (its sequence number and the time; with varying sizes its
// magic and stream id too, the image holding them at the largest size
// only), and its share of the checksums covering it left in sc.val.
func (cs *cstream) sign(bufs [][]byte, lens []int, now, nowSum uint64, sc *runScratch) {
	lens = lens[:len(bufs)]
	v := sc.val[:len(bufs)]
	k, w, tag := cs.k, cs.w, cs.seqTag
	if !cs.sizeVar {
		n := cs.sizes[0].n
		if (n-frame.SignatureLen)&1 == 0 {
			for j, b := range bufs {
				g := b[n-frame.SignatureLen : n]
				seq := k | tag
				k += w
				binary.BigEndian.PutUint64(g[4:], seq)
				binary.BigEndian.PutUint64(g[12:], now)
				v[j] = seq>>32 + seq&0xffffffff + nowSum // sigSum's, inline
			}
			cs.k = k
			return
		}
	}
	for j, b := range bufs {
		n := lens[j]
		g := b[n-frame.SignatureLen : n]
		seq := k | tag
		k += w
		if cs.sizeVar {
			binary.BigEndian.PutUint16(g[0:], frame.SignatureMagic)
			binary.BigEndian.PutUint16(g[2:], cs.id)
		}
		binary.BigEndian.PutUint64(g[4:], seq)
		binary.BigEndian.PutUint64(g[12:], now)
		v[j] = sigSum(seq, nowSum, (n-frame.SignatureLen)&1 == 1)
	}
	cs.k = k
}

// finish is renderStream's last step for a chunk: each checksum finished
// per frame, innermost first, in a pass of its own; its value is added to
// the sums of those covering it.
func (cs *cstream) finish(bufs [][]byte, sc *runScratch) {
	for p := range cs.rck {
		r := &cs.rck[p]
		s := sc.sum[p&(maxCks-1)][:len(bufs)]
		field, udp, bad := r.field, r.udp, r.bad
		if r.into == 0 && !bad {
			for j, b := range bufs {
				binary.BigEndian.PutUint16(b[field:], finishSum(s[j], udp))
			}
			continue
		}
		for j, b := range bufs {
			x := finishSum(s[j], udp)
			if bad {
				x = badSum(x, udp)
			}
			binary.BigEndian.PutUint16(b[field:], x)
			for c := r.into; c != 0; c &= c - 1 {
				sc.sum[bits.TrailingZeros8(c)&(maxCks-1)][j&(runChunk-1)] += uint64(x)
			}
		}
	}
}

// fill writes the cursor's next len(out) values into out and advances it
// as len(out) calls of next do, in one loop per kind.
func (c *cursor) fill(out []uint64) {
	switch c.kind {
	case Increment, Decrement:
		base, step := c.base, c.step
		if c.neg {
			step = -step // base - idx*step, modulo 2^64
		}
		// Runs of values between wraps: x grows by adv·step a packet.
		for len(out) > 0 {
			seg := out[:c.run(len(out))]
			x, dx := base+c.idx*step, c.adv*step
			for j := range seg {
				seg[j] = x
				x += dx
			}
			out = out[len(seg):]
			c.skip(len(seg))
		}
	case List, Weighted:
		for len(out) > 0 {
			seg := out[:c.run(len(out))]
			if c.adv == 1 {
				copy(seg, c.list[c.idx:])
			} else {
				idx, adv, list := c.idx, c.adv, c.list
				for j := range seg {
					seg[j] = list[idx]
					idx += adv
				}
			}
			out = out[len(seg):]
			c.skip(len(seg))
		}
	case Random:
		c.fillRandom(out)
	case kindDiv:
		c.fillDiv(out)
	default:
		for j := range out {
			out[j] = c.v.From
		}
	}
}

// run is how many of the next m packets a periodic cursor takes before
// its index passes the period (all m when it does not move).
func (c *cursor) run(m int) int {
	if c.adv == 0 {
		return m
	}
	return int(min(uint64(m), (c.n-c.idx+c.adv-1)/c.adv))
}

// skip advances a periodic cursor by s packets that do not pass the
// period more than once (run's).
func (c *cursor) skip(s int) {
	c.idx += uint64(s) * c.adv
	if c.idx >= c.n {
		c.idx -= c.n
	}
}

// golden is SplitMix64's increment (mix).
const golden = 0x9e3779b97f4a7c15

// fillRandom is fill for a random value: mix(seed, k) with its first step
// counted along (seed + (k+1)·golden grows by w·golden a packet).
func (c *cursor) fillRandom(out []uint64) {
	v := c.v
	z, dz := v.Seed+(c.k+1)*golden, c.w*golden
	c.k += c.w * uint64(len(out))
	switch span := v.To - v.From + 1; {
	case len(v.List) > 0:
		list := v.List
		for j := range out {
			hi, _ := bits.Mul64(mixStep(z), uint64(len(list)))
			out[j] = list[hi]
			z += dz
		}
	case span == 0: // the whole 64-bit range
		for j := range out {
			out[j] = mixStep(z)
			z += dz
		}
	default:
		from := v.From
		for j := range out {
			hi, _ := bits.Mul64(mixStep(z), span)
			out[j] = from + hi
			z += dz
		}
	}
}

// mixStep is mix after its first step: z = seed + (k+1)·golden.
func mixStep(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// fillDiv is fill for a field of a tuple, which holds each value for Div
// packets: the step q = idx/Div and the packet within it r = idx%Div are
// counted along (one division a chunk, not two a packet); with a stride
// below Div, in runs of one value.
func (c *cursor) fillDiv(out []uint64) {
	v := c.v
	d := v.Div
	steps := v.steps()
	q, r := c.idx/d, c.idx%d
	aq, ar := c.adv/d, c.adv%d
	at := func(q uint64) uint64 { // step q of steps, no modulo
		switch v.Kind {
		case List, Weighted:
			return v.List[q]
		case Decrement:
			return v.To - q*v.Step
		}
		return v.From + q*v.Step
	}
	for len(out) > 0 {
		if aq != 0 || ar == 0 {
			for j := range out {
				out[j] = at(q)
				q, r = divNext(q, r, aq, ar, d, steps)
			}
			break
		}
		// The packets left in step q, ar apart.
		seg := out[:min(uint64(len(out)), (d-r+ar-1)/ar)]
		x := at(q)
		for j := range seg {
			seg[j] = x
		}
		out = out[len(seg):]
		if r += uint64(len(seg)) * ar; r >= d {
			r -= d
			if q++; q == steps {
				q = 0
			}
		}
	}
	c.idx = q*d + r
}

// divNext advances idx = q·d + r by adv = aq·d + ar, modulo steps·d.
func divNext(q, r, aq, ar, d, steps uint64) (uint64, uint64) {
	q += aq
	if r += ar; r >= d {
		r -= d
		q++
	}
	if q >= steps {
		q -= steps
	}
	return q, r
}
