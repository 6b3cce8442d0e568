package template

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wpg-dev/wpg/header"
)

// TestPre64MatchesGo runs pre64 (assembly on amd64) and pre64Go on the
// same random arenas, sequence numbers, times and checksum positions and
// requires the same frames, counts and offsets: every checksum position
// the loop allows and none, both ways of writing a checksum of 0 (forced
// by choosing the arena's checksum so that the adjusted one folds to 0),
// batches that wrap the arena, and a buffer too short that stops the loop.
func TestPre64MatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 2000 {
		nframes := 1 + r.IntN(9)
		arena := make([]byte, 64*nframes)
		for i := range arena {
			arena[i] = byte(r.Uint32())
		}
		c := -1 + r.IntN(44) // -1 .. 42
		seq, w := r.Uint64()>>8, 1+r.Uint64N(5)
		now := r.Uint64()
		be := now<<56 | (now>>8&0xff)<<48 | (now>>16&0xff)<<40 | (now>>24&0xff)<<32 |
			(now>>32&0xff)<<24 | (now>>40&0xff)<<16 | (now>>48&0xff)<<8 | now>>56
		sum := header.Word64Sum(now)
		var zero uint64
		if r.IntN(2) == 0 {
			zero = 0xffff
		}
		n := r.IntN(3 * nframes)
		short := -1
		if n > 0 && r.IntN(4) == 0 {
			short = r.IntN(n)
		}
		lens, caps := make([]int, n), make([]int, n)
		for i := range caps {
			caps[i] = 64 + r.IntN(2)*32
			lens[i] = r.IntN(2) * 64 // renderers slice a buffer up to its capacity
			if i == short {
				caps[i], lens[i] = 63, 63
			}
		}
		mk := func() [][]byte {
			bufs := make([][]byte, n)
			for i := range bufs {
				bufs[i] = make([]byte, lens[i], caps[i])
			}
			return bufs
		}
		off := 64 * r.IntN(nframes)
		forced := c >= 0 && round%3 == 0
		if forced {
			// Make the first frame's adjusted checksum 0: old such that
			// ^old + s folds to 0xffff.
			s := header.Fold(seq>>32 + seq&0xffffffff + sum)
			binary.BigEndian.PutUint16(arena[off+c:], s)
		}
		a, g := mk(), mk()
		la, lg := make([]int, n), make([]int, n)
		na, oa := pre64(a, la, arena, off, seq, w, be, sum, c, zero)
		ng, og := pre64Go(g, lg, arena, off, seq, w, be, sum, c, zero)
		if na != ng || oa != og || !slices.Equal(la, lg) {
			t.Fatalf("round %d: pre64 rendered %d frames, next offset %d, lengths %v; pre64Go %d, %d, %v", round, na, oa, la, ng, og, lg)
		}
		for i := range na {
			if !bytes.Equal(a[i][:64], g[i][:64]) {
				t.Fatalf("round %d frame %d (c %d, zero %#x):\npre64   %x\npre64Go %x", round, i, c, zero, a[i][:64], g[i][:64])
			}
		}
		if forced && na > 0 && binary.BigEndian.Uint16(a[0][:64][c:]) != uint16(zero) {
			t.Fatalf("round %d: a checksum of 0 written as %#x, want %#x", round, binary.BigEndian.Uint16(a[0][:64][c:]), zero)
		}
		if short >= 0 && na != short {
			t.Fatalf("round %d: stopped after %d frames, the short buffer is %d", round, na, short)
		}
	}
}
