package template

import (
	"context"
	"encoding/binary"

	"github.com/wpg-dev/wpg/frame"
)

// delta is a prerendered stream kept as one image and, per frame, the
// bytes in which frames differ from it. For the embedded default at 1500
// bytes one period of the source port is 64512 frames: 92 MiB as whole
// frames, replayed from DRAM at every lap, but 1 MiB as 16 bytes per
// frame (the 8-byte words holding the port and the UDP checksum) over a
// cache-hot image.
type delta struct {
	n     int    // frame length (fixed)
	odd   bool   // signature at an odd offset from the L4 header
	base  []byte // frame 0
	words []int  // offsets of the 8-byte words that vary, ascending; a tail shorter than 8 bytes is the last
	rec   int    // bytes per frame in data
	data  []byte // frame j's varying words at data[j*rec:]
}

// Limits of the delta representation: frames of at least KeepMin bytes
// (smaller ones copy as fast as they patch), and at most a quarter of the
// frame varying.
const deltaMaxShare = 4

// newDelta prerenders cs's next need frames as a delta, or returns nil
// when the stream does not qualify (variable size, small frames, or frames
// that differ in more than a quarter of their bytes).
func newDelta(ctx context.Context, cs *cstream, need uint64) (*delta, error) {
	L, st := cs.L, cs.L.st
	if st.Size.Kind != Fixed || need < 2 || int(st.Size.From) < KeepMin {
		return nil, nil
	}
	n := int(st.Size.From)
	nw := (n + 7) / 8
	d := &delta{n: n, base: make([]byte, n), odd: (n-frame.SignatureLen)&1 == 1}
	L.write(d.base, n, cs.k, 0, false)
	scratch := make([]byte, n)
	varies := make([]bool, nw)
	count := 0
	mark := func(off int) {
		if !varies[off/8] {
			varies[off/8] = true
			count++
		}
	}
	// The prerendered replay adjusts the L4 checksum from the frame's own
	// value: it must come from the frame, never a previous lap's.
	for _, r := range cs.preCk {
		mark(r.field)
		mark(r.field + 1)
	}
	limit := nw / deltaMaxShare
	k := cs.k
	for j := range need - 1 {
		if j%checkEvery == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		k += cs.w
		L.write(scratch, n, k, 0, false)
		w := 0
		for ; w+8 <= n; w += 8 {
			if binary.LittleEndian.Uint64(scratch[w:]) != binary.LittleEndian.Uint64(d.base[w:]) {
				mark(w)
			}
		}
		for ; w < n; w++ {
			if scratch[w] != d.base[w] {
				mark(w)
			}
		}
		if count > limit {
			return nil, nil
		}
	}
	for i, v := range varies {
		if v {
			d.words = append(d.words, i*8)
			d.rec += min(8, n-i*8)
		}
	}
	d.data = make([]byte, int(need)*d.rec)
	k = cs.k
	for j := range int(need) {
		if j%checkEvery == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		L.write(scratch, n, k, 0, false)
		k += cs.w
		r := d.data[j*d.rec:]
		at := 0
		for _, off := range d.words {
			at += copy(r[at:], scratch[off:min(off+8, n)])
		}
	}
	return d, nil
}

// apply writes frame j's varying words into b (which holds the image).
func (d *delta) apply(b []byte, j int) {
	r := d.data[j*d.rec : (j+1)*d.rec]
	for _, off := range d.words {
		if off+8 <= d.n {
			binary.LittleEndian.PutUint64(b[off:], binary.LittleEndian.Uint64(r))
			r = r[8:]
		} else {
			r = r[copy(b[off:d.n], r):]
		}
	}
}
