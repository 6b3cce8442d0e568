package template

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/sys"
)

// Frames rendered into buffers that keep their contents.
//
// A TX-ring slot comes round again every ring depth frames, still holding
// the frame rendered into it a lap earlier: the kernel only reads it. When
// that frame came from the same stream image (same stream, same size), the
// bytes that do not vary per packet are already in place, and only the
// varying fields, length fields, checksums and the signature need writing:
// a few dozen bytes instead of the whole frame. The Source remembers, per
// buffer, what it last rendered there (a direct-mapped table keyed by the
// buffer's address); a buffer it does not know, or that held something
// else, gets the whole frame, as without KeepFrames. Prerendered frames
// are kept the same way, per frame of the arena (keepArena) or, for a
// delta, as its image.

// KeepMin is the smallest frame for which KeepFrames patches buffers in
// place: below it the whole-frame copy (a few cache lines, cache-hot) costs
// about what the look-up does.
const KeepMin = 256

// memoEntries is the size of the buffer table. Indexed by address / the
// largest power of two not above the largest frame, a ring of up to
// memoEntries such strides (16 MiB of 1024-byte granules for 1500-byte
// frames) maps one slot per entry; a deeper ring, or buffers closer than
// that, collide and fall back to whole-frame copies (slower, still correct).
const memoEntries = 1 << 14

type memoEntry struct {
	p   *byte // the buffer (held, so the address cannot be reused while remembered)
	tag uint64
}

// Tags: which image a buffer holds. An arena tag names one prerendered
// frame (bit 63 set: never a stream or delta tag, whose bits end at 47;
// j < 2^47, far more frames than memory holds).
func streamTag(id uint16, size int) uint64 { return uint64(id)<<32 | uint64(size) }
func deltaTag(id uint16) uint64            { return uint64(id)<<32 | 1<<31 }
func arenaTag(id uint16, j int) uint64     { return 1<<63 | uint64(id)<<47 | uint64(j) }

// keepArena puts prerendered frame j (n >= KeepMin bytes at off in the
// arena) into the kept buffer b. When b holds that very frame from an
// earlier lap (a one-frame arena, the fixed frame of most benchmarks,
// always does after the first lap), only what the replay changed in it is
// put back: the checksums the signature changes, which the replay adjusts
// from the frame's own value, so they must be the arena's again; the
// signature's seq and time the caller overwrites in any case. The bytes
// are then those of a whole-frame copy. Otherwise b gets the whole frame
// and is recorded as holding frame j.
func (cs *cstream) keepArena(b []byte, j, off, n int) {
	if !cs.memo.primed(b, arenaTag(cs.id, j)) {
		copy(b[:n], cs.arena[off:off+n])
		return
	}
	a := cs.arena[off : off+n]
	for k := range cs.preCk {
		// One 2-byte store: the replay loads the field right after, and a
		// load spanning two byte stores cannot be forwarded from them.
		f := cs.preCk[k].field
		binary.LittleEndian.PutUint16(b[f:], binary.LittleEndian.Uint16(a[f:]))
	}
}

// memo remembers which image each buffer last received.
type memo struct {
	tab   []memoEntry
	shift uint
}

func newMemo(maxFrame int) *memo {
	return &memo{tab: make([]memoEntry, memoEntries), shift: uint(bits.Len(uint(maxFrame)) - 1)}
}

// primed reports whether b still holds an image rendered with tag, and
// records that it will from now on (the caller then renders it whole).
func (m *memo) primed(b []byte, tag uint64) bool {
	p := &b[0]
	e := &m.tab[(sys.Addr(p)>>m.shift)&(memoEntries-1)]
	if e.p == p && e.tag == tag {
		return true
	}
	e.p, e.tag = p, tag
	return false
}

// forget records that b holds no known image (it got a whole frame from
// elsewhere, e.g. the prerendered arena).
func (m *memo) forget(b []byte) {
	p := &b[0]
	if e := &m.tab[(sys.Addr(p)>>m.shift)&(memoEntries-1)]; e.p == p {
		e.p = nil
	}
}

// forgetAll is forget for each buffer of a run; m may be nil (buffers not
// kept), then it does nothing.
func (m *memo) forgetAll(bufs [][]byte) {
	if m == nil {
		return
	}
	for _, b := range bufs {
		m.forget(b)
	}
}

// KeepFrames tells the Source that the buffers it is given keep their
// contents between Render calls: a buffer passed to Render again holds,
// byte for byte, the frame this Source rendered into it last (or was never
// rendered into by it). TX-ring slots and the staging buffers of the
// network backends do; the engine calls KeepFrames when the backend says
// so. From then on frames of KeepMin bytes or more rendered into a buffer
// that already holds the same stream image get only their varying bytes
// written (every frame then records what its buffer holds, whatever its
// size). Call it before the first Render; a Source whose frames are all
// shorter than KeepMin ignores it.
func (s *Source) KeepFrames() {
	if s.maxFrame < KeepMin || s.memo != nil {
		return
	}
	s.memo = newMemo(s.maxFrame)
	for _, cs := range s.streams {
		cs.memo = s.memo
	}
	s.detail += fmt.Sprintf("; the backend's buffers keep their frames: frames of %d bytes and more get only the bytes that change rewritten", KeepMin)
}

// runPreKept is runPre (fast.go) into kept buffers, for frames of KeepMin
// bytes and more: a buffer that does not hold frame j of the arena from an
// earlier lap gets the whole frame; then the signature is written and the
// one checksum it changes (if any) set from the arena's value of it, so
// that a buffer holding the frame needs nothing else. The bytes are
// runPre's.
func (cs *cstream) runPreKept(bufs [][]byte, lens []int, now, nowSum uint64) {
	n, npre := cs.fixN, cs.npre
	arena := cs.arena[:npre*n]
	m, id := cs.memo, cs.id
	j := cs.pj
	k, w, tag := cs.k, cs.w, cs.seqTag
	c, udp, odd, sig := cs.pre1, cs.pre1udp, cs.fixOdd, cs.sig
	for i, b := range bufs {
		b = b[:n]
		a := arena[j*n : j*n+n]
		if !m.primed(b, arenaTag(id, j)) {
			copy(b, a)
		}
		if sig {
			seq := k | tag
			s := b[n-frame.SignatureLen:]
			binary.BigEndian.PutUint64(s[4:], seq)
			binary.BigEndian.PutUint64(s[12:], now)
			if c >= 0 {
				b[c], b[c+1] = adjust(a[c], a[c+1], sigSum(seq, nowSum, odd), udp)
			}
		}
		lens[i] = n
		k += w
		if j++; j == npre {
			j = 0
		}
	}
	cs.k = k
	cs.pj = j
}
