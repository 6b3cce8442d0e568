package template

import (
	"encoding/binary"
	"math/bits"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/header"
)

// cursor walks a Value for one worker: packet k, k+W, k+2W, …
type cursor struct {
	v    *Value
	kind Kind
	idx  uint64 // k mod period for periodic kinds
	adv  uint64 // W mod period
	n    uint64 // period
	k, w uint64 // for Random
	// Increment/Decrement
	base, step uint64
	neg        bool
	list       []uint64
}

// kindDiv is the cursor kind of a tuple field (Value.Div > 1): computed
// in next, off the inlined fast path.
const kindDiv Kind = 255

func newCursor(v *Value, k, w uint64) cursor {
	c := cursor{v: v, kind: v.Kind, k: k, w: w}
	if v.Div > 1 {
		c.kind = kindDiv
	}
	if p := v.Period(); p > 0 {
		c.n = p
		c.idx = k % p
		c.adv = w % p
	}
	switch v.Kind {
	case Increment:
		c.base, c.step = v.From, v.Step
	case Decrement:
		c.base, c.step, c.neg = v.To, v.Step, true
	case List, Weighted:
		c.list = v.List
	}
	return c
}

// next returns the value of the current packet and advances by W packets.
func (c *cursor) next() uint64 {
	var x uint64
	switch c.kind {
	case Increment:
		x = c.base + c.idx*c.step
	case Decrement:
		x = c.base - c.idx*c.step
	case List, Weighted:
		x = c.list[c.idx]
	case Random:
		x = c.v.At(c.k)
		c.k += c.w
		return x
	case kindDiv:
		x = c.v.at(c.idx / c.v.Div)
	default:
		return c.v.From
	}
	c.idx += c.adv
	if c.idx >= c.n {
		c.idx -= c.n
	}
	return x
}

// sigSum is the checksum contribution of a signature's seq and time
// (tsSum = header.Word64Sum(time), computed once per batch).
// The sum of seq's 32-bit halves stands for that of its 16-bit words:
// the fold makes them the same (equal modulo 0xffff, 0 only for 0).
func sigSum(seq uint64, tsSum uint64, odd bool) uint64 {
	s := seq>>32 + seq&0xffffffff + tsSum
	if odd {
		return uint64(header.Swap16(header.Fold(s)))
	}
	return s
}

// renderOne writes the stream's next frame into b and returns its length.
// A run of one stream's frames calls renderPre or renderStream itself
// (renderRun), a frame at a time; renderOne is the same for a frame of
// any stream.
func (cs *cstream) renderOne(b []byte, now, nowSum uint64) int {
	if cs.rp != nil {
		return cs.renderReplay(b, now) // replay_render.go
	}
	if cs.fr != nil && !cs.fr.inside {
		return cs.renderFragment(b, now, nowSum) // fragment.go
	}
	if cs.pre {
		return cs.renderPre(b, now, nowSum)
	}
	return cs.renderStream(b, now, nowSum)
}

// renderPre writes the stream's next prerendered frame into b and
// returns its length: the frame from the arena (or the image and the
// frame's own bytes of a delta), its signature, and the checksums the
// signature changes adjusted from the frame's values.
func (cs *cstream) renderPre(b []byte, now, nowSum uint64) int {
	seq := cs.k | cs.seqTag
	cs.k += cs.w
	j := cs.pj
	cs.pj++
	if cs.pj == cs.npre {
		cs.pj = 0
	}
	var n int
	var odd bool
	if d := cs.delta; d != nil {
		n, odd = d.n, d.odd
		if cs.memo == nil || !cs.memo.primed(b, deltaTag(cs.id)) {
			copy(b[:n], d.base)
		}
		d.apply(b, j)
	} else {
		var off int
		if cs.frames == nil {
			n, odd, off = cs.fixN, cs.fixOdd, j*cs.fixN
		} else {
			f := cs.frames[j]
			n, odd, off = int(f.n), f.odd, f.off
		}
		if cs.memo != nil && n >= KeepMin {
			cs.keepArena(b, j, off, n) // keep.go
		} else {
			if n == 64 && len(b) >= 64 {
				*(*[64]byte)(b) = *(*[64]byte)(cs.arena[off:])
			} else {
				copy(b[:n], cs.arena[off:off+n])
			}
			if cs.memo != nil {
				cs.memo.forget(b)
			}
		}
	}
	if cs.sig {
		sig := b[n-frame.SignatureLen:]
		binary.BigEndian.PutUint64(sig[4:], seq)
		binary.BigEndian.PutUint64(sig[12:], now)
		if c := cs.pre1; c >= 0 {
			// One right checksum covers the signature, and no other
			// checksum covers it: adjust it from the frame's value.
			old := binary.BigEndian.Uint16(b[c:])
			binary.BigEndian.PutUint16(b[c:], finishSum(uint64(^old)+sigSum(seq, nowSum, odd), cs.pre1udp))
		} else if len(cs.preCk) > 0 {
			// Adjust the checksums from the frame's own values: the
			// signature's change, and that of every checksum inside.
			var d [maxCks]uint64
			ss := sigSum(seq, nowSum, odd)
			for k := range cs.preCk {
				r := &cs.preCk[k]
				c := r.c
				old := binary.BigEndian.Uint16(b[r.field:])
				right := old
				if c.bad {
					right = goodSum(old, c.udp)
				}
				sum := uint64(^right) + d[r.i&(maxCks-1)]
				if L := cs.L; L.tail&(1<<r.i) != 0 {
					sum += ss
				}
				x := c.finish(sum)
				binary.BigEndian.PutUint16(b[r.field:], x)
				for m := r.into; m != 0; m &= m - 1 {
					d[bits.TrailingZeros8(m)&(maxCks-1)] += uint64(^old) + uint64(x)
				}
			}
		}
	}
	return n
}

// renderStream writes the stream's next frame into b from the image and
// returns its length: the size's image, the length fields, the varying
// fields, the signature, then the checksums finished per frame. One body,
// the first two checksums' sums in registers from start to end.
func (cs *cstream) renderStream(b []byte, now, nowSum uint64) int {
	seq := cs.k | cs.seqTag
	cs.k += cs.w
	var se *sizeEntry
	si := uint64(0)
	if cs.sizeVar {
		si = cs.sizeCur.next()
	}
	se = &cs.sizes[si]
	n := se.n
	if cs.memo != nil && cs.memo.primed(b, streamTag(cs.id, int(si))) {
		// b holds this image from an earlier lap: every byte that
		// differs between frames is written below.
	} else if n == 64 && len(cs.img) >= 64 && len(b) >= 64 {
		// The classic size: a fixed-size array copy the compiler inlines.
		*(*[64]byte)(b) = *(*[64]byte)(cs.img)
	} else {
		copy(b[:n], cs.img[:n])
	}
	// The first two checksums in registers, the rest (tunnels) in cs.rest.
	s0, s1 := se.sums[0], se.sums[1]
	if cs.many {
		cs.rest = se.sums
	}
	for _, f := range cs.lens { // only when the size varies
		binary.BigEndian.PutUint16(b[f.off:], uint16(n-f.sub))
	}
	for i := range cs.fields {
		f := &cs.fields[i]
		var x uint64
		if c := &f.c; c.kind == Increment { // the common case, inline
			x = c.base + c.idx*c.step
			c.idx += c.adv
			if c.idx >= c.n {
				c.idx -= c.n
			}
		} else {
			x = c.next()
		}
		v := (x << f.shift) & f.mask
		switch {
		case f.rmw:
			// The slot is shared with another varying field: keep its
			// bits, replace this field's (zeros in the image, the
			// previous lap's value in a kept buffer).
			storeSlot(b, f.off, f.width, loadSlot(b, f.off, f.width)&^f.mask|v)
		case f.width == 2:
			binary.BigEndian.PutUint16(b[f.off:], uint16(f.base|v))
		case f.width == 4:
			binary.BigEndian.PutUint32(b[f.off:], uint32(f.base|v))
		default:
			storeSlot(b, f.off, f.width, f.base|v)
		}
		s := header.Word64Sum(v)
		if f.cov&1 != 0 {
			s0 += s
		}
		if f.cov&2 != 0 {
			s1 += s
		}
		if f.cov > 3 {
			for m := f.cov &^ 3; m != 0; m &= m - 1 {
				cs.rest[bits.TrailingZeros8(m)&(maxCks-1)] += s
			}
		}
	}
	if cs.sig {
		sig := b[n-frame.SignatureLen:]
		if cs.sizeVar { // the image holds the signature header at the largest size only
			binary.BigEndian.PutUint16(sig[0:], frame.SignatureMagic)
			binary.BigEndian.PutUint16(sig[2:], cs.id)
		}
		binary.BigEndian.PutUint64(sig[4:], seq)
		binary.BigEndian.PutUint64(sig[12:], now)
		ss := sigSum(seq, nowSum, se.oddSig)
		if cs.sigCov&1 != 0 {
			s0 += ss
		}
		if cs.sigCov&2 != 0 {
			s1 += ss
		}
		if cs.many {
			cs.addRest(cs.sigCov, ss)
		}
	}
	// Innermost first: an outer checksum adds the inner ones' values. The
	// first (the L4 checksum, as a rule) is finished here.
	if c := cs.c0; c >= 0 {
		x := finishSum(s0, cs.c0udp)
		if cs.c0bad {
			x = badSum(x, cs.c0udp)
		}
		binary.BigEndian.PutUint16(b[c:], x)
		if c1 := cs.c1; c1 >= 0 { // the second (an IPv4 header, as a rule)
			if cs.c0in1 {
				s1 += uint64(x)
			}
			y := finishSum(s1, cs.c1udp)
			if cs.c1bad {
				y = badSum(y, cs.c1udp)
			}
			binary.BigEndian.PutUint16(b[c1:], y)
			if cs.many {
				cs.finishRest(b, x, y)
			}
		}
	}
	return n
}

// finishRest finishes the checksums after the first two, given their
// values x0 and x1.
func (cs *cstream) finishRest(b []byte, x0, x1 uint16) {
	cs.addRest(cs.rck[0].into, uint64(x0))
	cs.addRest(cs.rck[1].into, uint64(x1))
	for k := 2; k < len(cs.rck); k++ {
		r := &cs.rck[k]
		x := r.c.finish(cs.rest[k&(maxCks-1)])
		binary.BigEndian.PutUint16(b[r.field:], x)
		cs.addRest(r.into, uint64(x))
	}
}

// finishSum turns a checksum's sum into the value written: the complement
// of its fold, 0xffff for a UDP checksum of 0 (0 means none). A checksum
// meant to be wrong takes badSum of it (cksum.finish). It inlines.
func finishSum(sum uint64, udp bool) uint16 {
	x := ^header.Fold(sum)
	if x == 0 && udp {
		x = 0xffff
	}
	return x
}

// addRest adds x to the sums of the checksums from the third on in m.
func (cs *cstream) addRest(m uint8, x uint64) {
	for m &^= 3; m != 0; m &= m - 1 {
		cs.rest[bits.TrailingZeros8(m)&(maxCks-1)] += x
	}
}

// Render implements engine.Source: it writes up to len(bufs) frames and
// returns how many; fewer means every stream reached its count.
func (s *Source) Render(bufs [][]byte, lens []int, nowNs int64) int {
	if s.tl != nil || s.failed {
		return s.renderTimed(bufs, lens, nowNs) // timed.go
	}
	now := uint64(nowNs)
	nowSum := header.Word64Sum(now)
	n := 0
	for n < len(bufs) && len(s.active) > 0 {
		if len(s.active) == 1 {
			cs := s.streams[s.active[0]]
			m := len(bufs) - n
			if !cs.unlimited && uint64(m) > cs.left {
				m = int(cs.left)
			}
			cs.renderRun(bufs[n:n+m], lens[n:n+m], now, nowSum) // fast.go
			n += m
			if !cs.unlimited {
				cs.left -= uint64(m)
				if cs.left == 0 {
					s.active = s.active[:0]
				}
			}
			continue
		}
		if s.by != nil && s.sched != nil { // bystream.go
			if m := s.renderByStream(bufs[n:], lens[n:], now, nowSum); m > 0 {
				n += m
				continue
			}
		}
		// Smooth weighted round-robin over the active streams: from the
		// precomputed period while the set of streams is unchanged.
		var best int
		if s.sched != nil {
			best = int(s.sched[s.pos])
			if s.pos++; s.pos == len(s.sched) {
				s.pos = 0
			}
		} else {
			best = s.rr.next()
		}
		cs := s.streams[best]
		// renderOne's choice, here: a call less per frame.
		switch {
		case cs.rp != nil || cs.fr != nil:
			lens[n] = cs.renderOne(bufs[n], now, nowSum)
		case cs.pre:
			lens[n] = cs.renderPre(bufs[n], now, nowSum)
		default:
			lens[n] = cs.renderStream(bufs[n], now, nowSum)
		}
		done := cs.took(lens[n])
		n++
		if done {
			s.remove(best)
		}
	}
	return n
}

// took counts a frame of l bytes rendered for the stream (its bytes, where
// it counts them) against its count, and says whether it was the last.
func (cs *cstream) took(l int) (last bool) {
	if cs.vcount {
		cs.vbytes += uint64(l)
	}
	if cs.unlimited {
		return false
	}
	cs.left--
	return cs.left == 0
}

func (s *Source) remove(i int) {
	for j, a := range s.active {
		if a == i {
			s.active = append(s.active[:j], s.active[j+1:]...)
			break
		}
	}
	s.total -= s.streams[i].share
	// Restart the round-robin state of the remaining streams, computed live
	// from now on.
	s.rr.remove(i, s.streams[i].share)
	s.sched = nil
}
