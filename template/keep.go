package template

import (
	"math/bits"

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
// else, gets the whole frame, as without KeepFrames.

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

// Tags: which image a buffer holds.
func streamTag(id uint16, size int) uint64 { return uint64(id)<<32 | uint64(size) }
func deltaTag(id uint16) uint64            { return uint64(id)<<32 | 1<<31 }

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
}
