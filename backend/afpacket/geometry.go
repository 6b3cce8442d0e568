package afpacket

import (
	"fmt"
	"math/bits"

	"github.com/wpg-dev/wpg/header"
)

// Defaults of the TX ring flags (--ring-depth, --ring-bytes, --batch).
const (
	DefaultRingDepth = 4096
	DefaultRingBytes = 16 << 20
	// HeaderLen is the TPACKET_V3 header in front of each frame in a slot.
	HeaderLen = 48
	// bigBlock is the block size used when the ring is large enough: fewer
	// blocks, and still an allocation the kernel serves easily.
	bigBlock = 64 << 10
)

// Geometry is the layout of a TX ring.
type Geometry struct {
	Slot      int // bytes per slot (header + frame), a power of two
	BlockSize int // bytes per block, a multiple of the page size and of Slot
	Blocks    int
	Depth     int // slots: Blocks * BlockSize / Slot
}

// Bytes is the size of the ring.
func (g Geometry) Bytes() int { return g.BlockSize * g.Blocks }

// TxGeometry computes the ring for frames of up to maxFrame bytes with at
// most depth slots (0: DefaultRingDepth) and at most ringBytes bytes (0:
// DefaultRingBytes). The slot is the smallest power of two holding
// HeaderLen + maxFrame, so a 64-byte frame takes 128 bytes and a 1514-byte
// frame 2 KiB; 16 KiB slots under the 16 MiB default give 1024 slots.
func TxGeometry(maxFrame, depth int, ringBytes int64, page int) (Geometry, error) {
	if depth == 0 {
		depth = DefaultRingDepth
	}
	if ringBytes == 0 {
		ringBytes = DefaultRingBytes
	}
	if maxFrame < header.EthernetLen || depth < 1 || ringBytes < 1 {
		return Geometry{}, fmt.Errorf("ring for %d-byte frames, --ring-depth %d, --ring-bytes %d: each must be positive (frames at least %d bytes)", maxFrame, depth, ringBytes, header.EthernetLen)
	}
	slot := 1 << bits.Len(uint(HeaderLen+maxFrame-1))
	slot = max(slot, 64)
	if int64(slot) > ringBytes {
		return Geometry{}, fmt.Errorf("--ring-bytes %d cannot hold one %d-byte slot for %d-byte frames: raise --ring-bytes (tx.ring_bytes)", ringBytes, slot, maxFrame)
	}
	if int64(depth)*int64(slot) > ringBytes {
		depth = int(ringBytes / int64(slot))
	}
	g := Geometry{Slot: slot, BlockSize: max(page, slot)}
	if g.BlockSize < bigBlock && depth*slot >= bigBlock {
		g.BlockSize = bigBlock
	}
	per := g.BlockSize / slot
	g.Blocks = depth / per
	if g.Blocks == 0 {
		// Fewer slots than one block holds: one block just big enough.
		g.Blocks = 1
		g.BlockSize = (depth*slot + page - 1) / page * page
		per = g.BlockSize / slot
		if int64(g.BlockSize) > ringBytes {
			per = depth
		}
	}
	g.Depth = g.Blocks * per
	return g, nil
}

// Adjustment says why the ring has a different number of slots than
// --ring-depth asked for (depth; 0: DefaultRingDepth) under --ring-bytes
// (ringBytes; 0: DefaultRingBytes), or "" when it has exactly that many:
// the ring-bytes cap, or the kernel's rule that a ring is whole blocks
// (each at least a page) of whole slots.
func (g Geometry) Adjustment(depth int, ringBytes int64) string {
	if depth == 0 {
		depth = DefaultRingDepth
	}
	if ringBytes == 0 {
		ringBytes = DefaultRingBytes
	}
	per := g.BlockSize / g.Slot
	switch {
	case g.Depth == depth:
		return ""
	case int64(depth)*int64(g.Slot) > ringBytes:
		return fmt.Sprintf("--ring-depth %d capped to %d: --ring-bytes %d holds %d slots of %d bytes (the smallest power of two for the 48-byte header and the largest frame); raise --ring-bytes (tx.ring_bytes) for more",
			depth, g.Depth, ringBytes, ringBytes/int64(g.Slot), g.Slot)
	case g.Depth > depth:
		return fmt.Sprintf("--ring-depth %d raised to %d: the kernel's ring is whole blocks of at least a page (%d bytes), and one holds %d slots of %d bytes",
			depth, g.Depth, g.BlockSize, per, g.Slot)
	}
	return fmt.Sprintf("--ring-depth %d lowered to %d: the kernel's ring is whole %d-byte blocks of %d slots of %d bytes; give a multiple of %d",
		depth, g.Depth, g.BlockSize, per, g.Slot, per)
}
