package template

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/wpg-dev/wpg/frame"
)

// cstream is a compiled stream for one worker.
type cstream struct {
	L     *layout
	id    uint16
	share int64
	sig   bool

	k, w      uint64 // next packet index, stride (workers)
	seqTag    uint64 // frame.SeqWord(0, workers): the worker count in the signature
	left      uint64 // frames left for this worker
	unlimited bool

	// Streaming: image and varying fields.
	img     []byte
	sizes   []sizeEntry // one entry per distinct size
	sizeCur cursor      // index into sizes (when the size varies)
	sizeVar bool
	fields  []pfield
	lens    []lenField // length fields to patch when the size varies
	rck     []rtck     // the checksums patched per frame, innermost first (the others are in the image)
	sigCov  uint8      // the checksums of rck (bits: positions in rck) covering the signature
	preCk   []rtck     // prerendered: the checksums the signature changes, innermost first
	pre1    int        // prerendered: the one checksum the signature changes when nothing else does (the common case), else -1
	pre1udp bool
	many    bool           // more than two checksums per frame: the others are summed in rest
	rest    [maxCks]uint64 // their sums while a frame is rendered (positions 2 and up)
	c0      int            // the first checksum's field (rck[0]), -1 for none
	c0udp   bool
	c0bad   bool
	c0in1   bool // the second covers the first
	c1      int  // the second checksum's field (rck[1]), -1 for none
	c1udp   bool
	c1bad   bool

	// Prerendering.
	pre    bool
	arena  []byte
	frames []preFrame // per frame, when the size varies; nil for one size
	fixN   int        // the frame size when frames is nil
	fixOdd bool
	delta  *delta // instead of arena and frames, for large fixed-size frames
	npre   int    // frames prerendered
	pj     int

	memo *memo // the Source's, once KeepFrames was called

	run  runPlan     // the loop rendering a run of this stream's frames (fast.go)
	scr  *runScratch // the streaming run loop's per-frame state, shared by the Source's streams (fast_stream.go)
	kern *kernelArgs // the streaming kernel's arguments, nil when it cannot render the stream (fast_kernel.go)

	fr *fragger // the datagrams' fragments (fragment.go), nil for whole datagrams

	rp *replay // a capture replayed (replay_render.go), nil for a layer stack
	tm *stime  // the stream's own schedule (timed.go), nil when shared

	// vbytes counts the bytes rendered of a stream whose frames differ in
	// length (fixedLen 0) when vcount is set, by the lengths Render
	// returns (a run of the stream's frames at a time where it can). The
	// stream of the largest share among those is not counted (its bytes
	// are the rest of the source's: StreamBytes), nor is a stream of one
	// length (its frames times the length): a template of one stream
	// counts nothing per frame.
	vbytes uint64
	vcount bool
	// late sums, and lateMax is the largest, lateness of a timed stream's
	// frames (ns, render time less due time; none early), lateN counts
	// them (timed.go).
	late, lateMax int64
	lateN         uint64
}

// fixedLen is the length of every frame of the stream, or 0 when it
// differs from frame to frame (sizes that vary, prerendered frames of
// several sizes, a capture, fragments), which vbytes then counts.
func (cs *cstream) fixedLen() int {
	switch {
	case cs.rp != nil, cs.fr != nil:
		return 0
	case cs.pre && cs.delta != nil:
		return cs.delta.n
	case cs.pre && cs.frames == nil:
		return cs.fixN
	case cs.pre, cs.sizeVar:
		return 0
	}
	return cs.sizes[0].n
}

type sizeEntry struct {
	n      int
	sums   [maxCks]uint64 // base sums, per checksum of the layout
	oddSig bool           // signature at an odd offset from the start of the checksummed data
}

// rtck is a checksum finished per frame: checksum i of the layout. In
// cstream.rck, into and the fields' coverage are by position in rck (the
// first two are summed in registers); in preCk, by layout index.
type rtck struct {
	i        int
	field    int
	into     uint8 // the checksums covering this one's field
	udp, bad bool
	c        *cksum
}

type preFrame struct {
	off int
	n   uint16
	odd bool
}

// preFrameSize is the memory a preFrame takes (an int, a uint16 and a bool,
// padded to 16 bytes on 64-bit machines), counted against the prerender
// byte limit.
const preFrameSize = 16

// pfield is a varying field being patched.
type pfield struct {
	base       uint64 // the slot's bits around the field, from the image
	rmw        bool   // the slot overlaps an earlier varying field's: OR into the frame
	off, width int
	shift      uint
	mask       uint64
	cov        uint8
	c          cursor
}

// compileStream prepares the frame image, the per-size base sums and the
// varying-field patchers.
func (cs *cstream) compileStream() {
	L, st := cs.L, cs.L.st
	maxN := int(st.Size.Max())
	cs.img = make([]byte, maxN)
	L.write(cs.img, maxN, 0, 0, true)
	cs.compileSizes()
	remap := cs.compileChecksums()
	for i := range L.slots {
		sl := &L.slots[i]
		if sl.v.Kind == Fixed {
			continue
		}
		rmw := false
		for _, g := range cs.fields {
			if sl.off < g.off+g.width && g.off < sl.off+sl.width {
				rmw = true
			}
		}
		cs.fields = append(cs.fields, pfield{rmw: rmw, base: loadSlot(cs.img, sl.off, sl.width) &^ sl.mask, off: sl.off, width: sl.width, shift: sl.shift, mask: sl.mask, cov: remap(sl.cov), c: newCursor(&sl.v, cs.k, cs.w)})
	}
}

// compileSizes builds the size table (one entry per distinct size, with
// its base sums) and, when the size varies, the cursor over its indexes.
func (cs *cstream) compileSizes() {
	L, st := cs.L, cs.L.st
	scratch := make([]byte, int(st.Size.Max()))
	var distinct []uint64
	if st.Size.Kind == Fixed {
		distinct = []uint64{st.Size.From}
	} else {
		cs.sizeVar = true
		distinct = distinctSizes(&st.Size)
	}
	index := map[uint64]uint64{}
	for i, n := range distinct {
		// Every checksummed region starts at an even offset: the
		// signature's parity from it is the frame's.
		cs.sizes = append(cs.sizes, sizeEntry{n: int(n), sums: L.baseSums(scratch, int(n)), oddSig: (int(n)-frame.SignatureLen)&1 == 1})
		index[n] = uint64(i)
	}
	if !cs.sizeVar {
		return
	}
	// A Value over size-table indexes with the same sequence as Size.
	iv := st.Size
	switch iv.Kind {
	case Increment, Decrement:
		// Map through a list of one period.
		list := make([]uint64, iv.n())
		for j := range list {
			list[j] = index[iv.At(uint64(j))]
		}
		iv = Value{Kind: List, List: list}
	case List, Weighted:
		list := make([]uint64, len(iv.List))
		for j, x := range iv.List {
			list[j] = index[x]
		}
		iv.List = list
	case Random:
		if len(iv.List) > 0 {
			list := make([]uint64, len(iv.List))
			for j, x := range iv.List {
				list[j] = index[x]
			}
			iv.List = list
		} else {
			iv.From, iv.To = 0, iv.To-iv.From // distinct sizes are From..To in order
		}
	}
	cs.sizeCur = newCursor(&iv, cs.k, cs.w)
	cs.lens = L.lens
}

// compileChecksums picks the checksums finished per frame (rck) and
// finishes the others in the image and the base sums. It returns the map
// from the layout's checksum bits to positions in rck, by which the
// fields and the signature name the checksums covering them from then on.
func (cs *cstream) compileChecksums() (remap func(uint8) uint8) {
	L := cs.L
	// A checksum changes only with a varying field it covers, the size,
	// the signature or a checksum inside it that changes; otherwise it is
	// final in the image (and in the base sums of those covering it).
	var varying uint8
	for i := range L.slots {
		if L.slots[i].v.Kind != Fixed {
			varying |= L.slots[i].cov
		}
	}
	if cs.sig {
		varying |= L.tail
	}
	for i := range L.cks {
		c := &L.cks[i]
		if cs.sizeVar || varying&(1<<i) != 0 {
			cs.rck = append(cs.rck, rtck{i: i, field: c.field, into: L.into[i], udp: c.udp, bad: c.bad, c: c})
			varying |= L.into[i]
			continue
		}
		x := c.finish(cs.sizes[0].sums[i])
		binary.BigEndian.PutUint16(cs.img[c.field:], x)
		for m := L.into[i]; m != 0; m &= m - 1 {
			cs.sizes[0].sums[bits.TrailingZeros8(m)] += uint64(x)
		}
	}
	// From here on, checksums are known by their position in rck.
	remap = func(m uint8) uint8 {
		var out uint8
		for k := range cs.rck {
			if m&(1<<cs.rck[k].i) != 0 {
				out |= 1 << k
			}
		}
		return out
	}
	for k := range cs.rck {
		cs.rck[k].into = remap(cs.rck[k].into)
	}
	for j := range cs.sizes {
		var rs [maxCks]uint64
		for k := range cs.rck {
			rs[k] = cs.sizes[j].sums[cs.rck[k].i]
		}
		cs.sizes[j].sums = rs
	}
	if cs.sig {
		cs.sigCov = remap(L.tail)
	}
	cs.many = len(cs.rck) > 2
	cs.c0 = -1
	if len(cs.rck) > 0 {
		r := &cs.rck[0]
		cs.c0, cs.c0udp, cs.c0bad, cs.c0in1 = r.field, r.udp, r.bad, r.into&2 != 0
	}
	cs.c1 = -1
	if len(cs.rck) > 1 {
		r := &cs.rck[1]
		cs.c1, cs.c1udp, cs.c1bad = r.field, r.udp, r.bad
	}
	return remap
}

// distinctSizes lists the sizes a varying size takes, ascending; for a
// range they are From..To (every value, so a random pick maps by offset).
func distinctSizes(v *Value) []uint64 {
	if len(v.List) > 0 {
		seen := map[uint64]bool{}
		var out []uint64
		for _, x := range v.List {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
		return out
	}
	out := make([]uint64, 0, v.To-v.From+1)
	for x := v.From; x <= v.To; x++ {
		out = append(out, x)
	}
	return out
}

// prerender renders this worker's next need frames into one arena, or,
// for large fixed-size frames that differ in few bytes, as one image and
// the differing bytes of every frame (see newDelta). It returns a note for
// the plan detail. It stops with ctx.Err() when ctx is done.
func (cs *cstream) prerender(ctx context.Context, need uint64) (string, error) {
	L, st := cs.L, cs.L.st
	cs.pre = true
	cs.npre = int(need)
	if cs.sig {
		// The checksums the signature changes: those running to the end
		// of the frame, and those covering a checksum that changes.
		hit := L.tail
		for i := range L.cks {
			if hit&(1<<i) != 0 {
				c := &L.cks[i]
				cs.preCk = append(cs.preCk, rtck{i: i, field: c.field, into: L.into[i], udp: c.udp, bad: c.bad, c: c})
				hit |= L.into[i]
			}
		}
	}
	cs.pre1 = -1
	if len(cs.preCk) == 1 && !cs.preCk[0].bad {
		cs.pre1, cs.pre1udp = cs.preCk[0].field, cs.preCk[0].udp
	}
	d, err := newDelta(ctx, cs, need)
	if err != nil {
		return "", err
	}
	if d != nil {
		cs.delta = d
		return fmt.Sprintf(", kept as one %d-byte image and the %d bytes that vary per frame (%s in all)", d.n, d.rec, sizeString(int64(d.n+len(d.data)))), nil
	}
	total, err := prerenderBytes(ctx, st, cs.k, cs.w, need)
	if err != nil {
		return "", err
	}
	cs.arena = make([]byte, total)
	fixed := st.Size.Kind == Fixed
	if fixed {
		// One size: frame j is at j*n, no index.
		cs.fixN = int(st.Size.From)
		cs.fixOdd = (cs.fixN-frame.SignatureLen)&1 == 1
	} else {
		cs.frames = make([]preFrame, need)
	}
	sc := newCursor(&st.Size, cs.k, cs.w)
	off := 0
	k := cs.k
	for j := range need {
		if j%checkEvery == 0 && ctx.Err() != nil {
			cs.arena, cs.frames = nil, nil
			return "", ctx.Err()
		}
		n := int(sc.next())
		L.write(cs.arena[off:], n, k, 0, false)
		if !fixed {
			cs.frames[j] = preFrame{off: off, n: uint16(n), odd: (n-frame.SignatureLen)&1 == 1}
		}
		off += n
		k += cs.w
	}
	return "", nil
}
