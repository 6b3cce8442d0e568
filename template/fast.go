package template

import (
	"encoding/binary"
	"math/bits"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/header"
)

// The run loops: a batch's frames of one stream in one loop.
//
// Render hands a stream a run of frames whenever it is the only one
// active (the common case: one stream, or the last of several). For the
// plans that dominate the small-frame rate, renderRun renders the run in a
// loop of its own instead of calling renderOne per frame: the stream's
// state lives in registers for the whole run, the cases renderOne tests
// per frame (replay, fragments, varying sizes, kept buffers) are decided
// once, and what is per batch (the time stamp, its checksum share) is
// computed once. The bytes written are renderOne's, byte for byte
// (TestRunLoopsMatchRenderOne).

// runPlan says which loop renders a run of this stream.
type runPlan uint8

const (
	runOne    runPlan = iota // renderOne per frame
	runPre                   // prerendered frames of one size, at most one checksum adjusted
	runPreVar                // prerendered frames of several sizes (the frame table), the same
	runStream                // streamed frames, in passes over the run (fast_stream.go)
)

// planRun picks the stream's run loop; called once compiled, with the
// scratch the Source's streamed streams share.
func (cs *cstream) planRun(scr *runScratch) {
	cs.run = runOne
	if cs.rp != nil || cs.fr != nil || cs.tm != nil {
		return
	}
	oneCk := !cs.sig || cs.pre1 >= 0 || len(cs.preCk) == 0
	switch {
	case cs.pre && cs.delta == nil && cs.frames == nil && cs.fixN > 0 && oneCk:
		cs.run = runPre
	case cs.pre && cs.delta == nil && cs.frames != nil && oneCk:
		cs.run = runPreVar
	case !cs.pre && cs.img != nil:
		cs.run, cs.scr = runStream, scr
		cs.planKernel(scr) // fast_kernel.go
	}
}

// renderRun renders len(bufs) frames of the stream.
func (cs *cstream) renderRun(bufs [][]byte, lens []int, now, nowSum uint64) {
	switch {
	case cs.run == runPre && cs.memo != nil && cs.fixN >= KeepMin:
		cs.runPreKept(bufs, lens, now, nowSum) // keep.go
		return
	case cs.run == runPre:
		cs.runPre(bufs, lens, now, nowSum)
		cs.memo.forgetAll(bufs) // frames below KeepMin: copied whole, not remembered
		return
	case cs.run == runPreVar:
		// Kept buffers would hold frame j of the arena only when the
		// ring's depth is a multiple of its length: copied whole.
		cs.runPreVar(bufs, lens, now, nowSum)
		cs.memo.forgetAll(bufs)
		if cs.vcount {
			for _, n := range lens {
				cs.vbytes += uint64(n)
			}
		}
		return
	}
	// renderOne's choice, made once for the run.
	switch {
	case cs.run == runStream:
		cs.runStream(bufs, lens, now, nowSum) // fast_stream.go
	case cs.rp != nil || cs.fr != nil:
		for j, b := range bufs {
			lens[j] = cs.renderOne(b, now, nowSum)
		}
	case cs.pre:
		for j, b := range bufs {
			lens[j] = cs.renderPre(b, now, nowSum)
		}
	default:
		for j, b := range bufs {
			lens[j] = cs.renderStream(b, now, nowSum)
		}
	}
	if cs.vcount {
		for _, n := range lens {
			cs.vbytes += uint64(n)
		}
	}
}

// runPre is renderOne's prerendered path for frames of one size: copy the
// frame from the arena, write the signature's sequence number and time
// (the arena holds zeros there) and adjust the one checksum covering them
// by their sum.
func (cs *cstream) runPre(bufs [][]byte, lens []int, now, nowSum uint64) {
	if cs.fixN == 64 && cs.sig {
		cs.runPre64(bufs, lens, now, nowSum)
		return
	}
	n := cs.fixN
	arena := cs.arena[:cs.npre*n]
	off := cs.pj * n
	k, w, tag := cs.k, cs.w, cs.seqTag
	c, udp, odd, sig := cs.pre1, cs.pre1udp, cs.fixOdd, cs.sig
	for i, b := range bufs {
		b = b[:n]
		copy(b, arena[off:off+n])
		if sig {
			seq := k | tag
			s := b[n-frame.SignatureLen:]
			binary.BigEndian.PutUint64(s[4:], seq)
			binary.BigEndian.PutUint64(s[12:], now)
			if c >= 0 {
				b[c], b[c+1] = adjust(b[c], b[c+1], sigSum(seq, nowSum, odd), udp)
			}
		}
		lens[i] = n
		k += w
		if off += n; off == len(arena) {
			off = 0
		}
	}
	cs.k = k
	cs.pj = off / n
}

// runPreVar is runPre for prerendered frames of several sizes, each from
// the frame table: its offset in the arena, its size, the parity of its
// signature's offset.
func (cs *cstream) runPreVar(bufs [][]byte, lens []int, now, nowSum uint64) {
	frames, arena := cs.frames[:cs.npre], cs.arena
	j := cs.pj
	k, w, tag := cs.k, cs.w, cs.seqTag
	c, udp, sig := cs.pre1, cs.pre1udp, cs.sig
	for i, b := range bufs {
		f := frames[j]
		n := int(f.n)
		b = b[:n]
		copy(b, arena[f.off:f.off+n])
		if sig {
			seq := k | tag
			s := b[n-frame.SignatureLen:]
			binary.BigEndian.PutUint64(s[4:], seq)
			binary.BigEndian.PutUint64(s[12:], now)
			if c >= 0 {
				b[c], b[c+1] = adjust(b[c], b[c+1], sigSum(seq, nowSum, f.odd), udp)
			}
		}
		lens[i] = n
		k += w
		if j++; j == len(frames) {
			j = 0
		}
	}
	cs.k, cs.pj = k, j
}

// adjust returns the bytes of the checksum hi, lo after data summing to
// ss (sigSum) was added to what it covers; a UDP checksum of 0 is
// written as 0xffff.
func adjust(hi, lo byte, ss uint64, udp bool) (byte, byte) {
	x := ^header.Fold(uint64(^(uint16(hi)<<8 | uint16(lo))) + ss)
	if x == 0 && udp {
		x = 0xffff
	}
	return byte(x >> 8), byte(x)
}

// runPre64 is runPre for 64-byte frames with a signature, the classic
// small frame: the signature's seq and time are the frame's last 16
// bytes, its start is even (no swap of the checksum's share), and the
// checksum is in the 44 bytes before it. The loop is pre64: in assembly
// on amd64 (fast_amd64.s), else pre64Go, written for the register
// allocator: the 48 bytes before seq are copied in 8-byte moves (copy,
// and an array assignment the compiler cannot prove free of overlap, call
// memmove, and a call in this loop makes it keep its state on the stack).
// In both, seq is counted in place of k (the worker tag is its top byte,
// k stays below it), the time is byte-swapped once, and the checksum is
// adjusted by the 32-bit halves of seq, whose sum the fold makes the same
// as that of its 16-bit words.
func (cs *cstream) runPre64(bufs [][]byte, lens []int, now, nowSum uint64) {
	arena := cs.arena[:cs.npre*64]
	w := cs.w
	m := uint64(len(bufs))
	c := cs.pre1
	if cs.k+w*m >= 1<<frame.SeqBits || c > 64-frame.SignatureLen-2 {
		// Never in practice: 2^56 frames; a checksum inside the
		// signature.
		for i, b := range bufs {
			lens[i] = cs.renderOne(b, now, nowSum)
		}
		return
	}
	var zero uint64 // what a checksum of 0 is written as
	if cs.pre1udp {
		zero = 0xffff
	}
	be := bits.ReverseBytes64(now) // stored little-endian: now, big-endian
	n, off := pre64(bufs, lens[:len(bufs)], arena, cs.pj*64, cs.k|cs.seqTag, w, be, nowSum, c, zero)
	cs.k += w * uint64(n)
	cs.pj = off / 64
	if n < len(bufs) {
		// A buffer of fewer than 64 bytes: renderOne's path (which
		// panics as slicing it to 64 would).
		for i := n; i < len(bufs); i++ {
			lens[i] = cs.renderOne(bufs[i], now, nowSum)
		}
	}
}

// pre64Go is runPre64's loop in Go (pre64 on machines without one in
// assembly, and the reference the assembly is tested against): render
// 64-byte frames into bufs from arena, starting at byte off of it, the
// first with sequence word seq (the worker tag included), each next one
// w more; be is the batch's time, byte-swapped; sum its checksum share
// (header.Word64Sum); c the checksum to adjust (-1: none; at most 42, in
// the 48 bytes before seq), zero what a checksum of 0 is written as. It
// stops at the first buffer with a capacity under 64 bytes and returns
// the frames rendered (their lens 64) and the arena offset of the next
// frame. len(lens) is at least len(bufs).
func pre64Go(bufs [][]byte, lens []int, arena []byte, off int, seq, w, be, sum uint64, c int, zero uint64) (n, next int) {
	a := arena[off:]
	lens = lens[:len(bufs)]
	for i, b := range bufs {
		if cap(b) < 64 {
			return i, len(arena) - len(a)
		}
		d, s := b[:64], a[:64]
		binary.LittleEndian.PutUint64(d[0:], binary.LittleEndian.Uint64(s[0:]))
		binary.LittleEndian.PutUint64(d[8:], binary.LittleEndian.Uint64(s[8:]))
		binary.LittleEndian.PutUint64(d[16:], binary.LittleEndian.Uint64(s[16:]))
		binary.LittleEndian.PutUint64(d[24:], binary.LittleEndian.Uint64(s[24:]))
		binary.LittleEndian.PutUint64(d[32:], binary.LittleEndian.Uint64(s[32:]))
		binary.LittleEndian.PutUint64(d[40:], binary.LittleEndian.Uint64(s[40:]))
		binary.BigEndian.PutUint64(d[48:], seq)
		binary.LittleEndian.PutUint64(d[56:], be)
		if c >= 0 {
			old := binary.BigEndian.Uint16(s[c&63:])
			x := ^header.Fold(uint64(^old) + seq>>32 + seq&0xffffffff + sum)
			if x == 0 {
				x = uint16(zero)
			}
			binary.BigEndian.PutUint16(d[c&63:], x)
		}
		lens[i] = 64
		seq += w
		if a = a[64:]; len(a) == 0 {
			a = arena
		}
	}
	return len(bufs), len(arena) - len(a)
}
