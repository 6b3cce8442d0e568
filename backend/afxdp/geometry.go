package afxdp

import (
	"fmt"
	"math/bits"

	"github.com/wpg-dev/wpg/header"
)

// Defaults and limits of a sender's rings and UMEM.
const (
	// DefaultRingDepth is the TX ring (and UMEM) depth without --ring-depth.
	DefaultRingDepth = 4096
	// DefaultRingBytes caps the UMEM without --ring-bytes.
	DefaultRingBytes = 16 << 20
	// minDepth is the smallest TX ring wpg sets up.
	minDepth = 8
	// rxHeadroom is what the kernel keeps in front of a received frame in
	// its chunk (XDP_PACKET_HEADROOM).
	rxHeadroom = 256
)

// Geometry is a sender's UMEM and rings: Depth chunks of Chunk bytes, a TX
// ring and a completion ring of Depth entries each, so that every TX slot
// can have its frame in flight.
type Geometry struct {
	Chunk int // bytes per UMEM chunk: 2048, or the page size for larger frames
	Depth int // TX ring entries = completion ring entries = UMEM chunks
}

// UMEMBytes is the size of the UMEM.
func (g Geometry) UMEMBytes() int64 { return int64(g.Chunk) * int64(g.Depth) }

// chunkFor returns the smallest UMEM chunk holding room bytes: 2048, or the
// page size; 0 when not even a page does.
func chunkFor(room, page int) int {
	switch {
	case room <= 2048:
		return 2048
	case room <= page:
		return page
	}
	return 0
}

// floorPow2 is the largest power of two not above n (n >= 1).
func floorPow2(n int64) int { return 1 << (bits.Len64(uint64(n)) - 1) }

// TxGeometry computes a sender's UMEM for frames of up to maxFrame bytes,
// with at most depth TX slots (0: DefaultRingDepth) and at most ringBytes
// of UMEM (0: DefaultRingBytes). The kernel's rings are powers of two, so
// depth is rounded down to one, and capped where ringBytes holds fewer
// chunks. adjusted says, in words, what changed and why ("" for nothing).
func TxGeometry(maxFrame, depth int, ringBytes int64, page int) (g Geometry, adjusted string, err error) {
	if depth == 0 {
		depth = DefaultRingDepth
	}
	if ringBytes == 0 {
		ringBytes = DefaultRingBytes
	}
	if maxFrame < header.EthernetLen || depth < 1 || ringBytes < 1 {
		return g, "", fmt.Errorf("UMEM for %d-byte frames, --ring-depth %d, --ring-bytes %d: each must be positive (frames at least %d bytes)", maxFrame, depth, ringBytes, header.EthernetLen)
	}
	g.Chunk = chunkFor(maxFrame, page)
	if g.Chunk == 0 {
		return g, "", fmt.Errorf("frames of %d bytes do not fit a UMEM chunk (at most one page, %d bytes, without multi-buffer descriptors): use frames of at most %d bytes", maxFrame, page, page)
	}
	if ringBytes < int64(minDepth*g.Chunk) {
		return g, "", fmt.Errorf("--ring-bytes %d cannot hold the UMEM's minimum of %d chunks of %d bytes (%d bytes): raise --ring-bytes (tx.ring_bytes)", ringBytes, minDepth, g.Chunk, minDepth*g.Chunk)
	}
	g.Depth = floorPow2(int64(max(depth, minDepth)))
	if cap := floorPow2(ringBytes / int64(g.Chunk)); g.Depth > cap {
		g.Depth = cap
		return g, fmt.Sprintf("--ring-depth %d capped to %d: --ring-bytes %d holds %d UMEM chunks of %d bytes (the ring is a power of two); raise --ring-bytes (tx.ring_bytes) for more",
			depth, g.Depth, ringBytes, ringBytes/int64(g.Chunk), g.Chunk), nil
	}
	switch {
	case g.Depth < depth:
		adjusted = fmt.Sprintf("--ring-depth %d lowered to %d: AF_XDP rings are powers of two", depth, g.Depth)
	case g.Depth > depth:
		adjusted = fmt.Sprintf("--ring-depth %d raised to %d: the smallest ring wpg sets up", depth, g.Depth)
	}
	return g, adjusted, nil
}

// maxRxMTU is the largest MTU whose frames (VLAN-tagged twice) and the
// kernel's headroom fit one page, the largest UMEM chunk.
func maxRxMTU(page int) int {
	return page - rxHeadroom - header.EthernetLen - 2*header.VLANLen
}

// RxGeometry computes one receive socket's UMEM on an interface with the
// given MTU, within ringBytes (0: DefaultRingBytes; each receive queue has
// a UMEM of its own): a power of two of chunks holding the kernel's
// headroom and the largest (VLAN-tagged) frame. The fill and RX rings are
// as deep as the UMEM has chunks.
func RxGeometry(mtu int, ringBytes int64, page int) (chunk, chunks int, err error) {
	if ringBytes == 0 {
		ringBytes = DefaultRingBytes
	}
	room := rxHeadroom + mtu + header.EthernetLen + 2*header.VLANLen
	chunk = chunkFor(room, page)
	if chunk == 0 {
		return 0, 0, fmt.Errorf("an MTU of %d does not fit a UMEM chunk (at most %d bytes with the kernel's %d-byte headroom): lower it to %d with `ip link set IFACE mtu %d`, or receive with --backend afpacket", mtu, page, rxHeadroom, maxRxMTU(page), maxRxMTU(page))
	}
	if ringBytes < int64(2*minDepth*chunk) {
		return 0, 0, fmt.Errorf("--ring-bytes %d cannot hold a receive UMEM of %d chunks of %d bytes: raise --ring-bytes", ringBytes, 2*minDepth, chunk)
	}
	return chunk, floorPow2(ringBytes / int64(chunk)), nil
}
