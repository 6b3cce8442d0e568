package nexthop

import (
	"strings"

	"golang.org/x/net/bpf"

	"github.com/wpg-dev/wpg/header"
)

// Tag is one VLAN tag of a port's frames: its TPID (0x8100 for 802.1Q,
// 0x88a8 for an 802.1ad service tag) and its VLAN id.
type Tag struct {
	TPID uint16
	ID   uint16
}

// String writes the tag as "802.1Q 100", "802.1ad 10" (or "0x9100 10").
func (t Tag) String() string { return header.FormatVLANTag(t.TPID, t.ID) }

// FormatTags writes a tag stack, outer tag first: "untagged", "802.1Q
// 100", "802.1ad 10 + 802.1Q 100".
func FormatTags(tags []Tag) string {
	if len(tags) == 0 {
		return "untagged"
	}
	s := make([]string, len(tags))
	for i, t := range tags {
		s[i] = t.String()
	}
	return strings.Join(s, " + ")
}

// Offsets in a frame as the socket filter sees it, from package header.
const (
	offType = header.EtherTypeOffset
	tciID   = header.VLANIDMask
)

// tagFilter is the socket filter of a tagged port's agent (a socket that
// sees all of the port's frames): it passes the port's neighbour
// messages (ARP for an IPv4 port; Neighbor Solicitations and
// Advertisements for an IPv6 one) that carry exactly the tag stack tags,
// and nothing else. The kernel may have taken the outer tag out of the
// frame into its metadata (on receive it always does, and a NIC's VLAN
// offload too): then the metadata's tag must be the outer one and the
// frame holds the others; without it the frame holds them all.
func tagFilter(tags []Tag, v4 bool) []bpf.Instruction {
	var p []bpf.Instruction
	if len(tags) > 0 {
		// Tag in the metadata: it is the outer tag, the frame holds the rest.
		meta := []bpf.Instruction{
			bpf.LoadExtension{Num: bpf.ExtVLANProto},
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(tags[0].TPID), SkipTrue: 3},
			bpf.LoadExtension{Num: bpf.ExtVLANTag},
			bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: tciID},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(tags[0].ID), SkipFalse: 0, SkipTrue: 1},
			bpf.RetConstant{Val: 0},
		}
		meta = append(meta, inlineFilter(tags[1:], v4)...)
		p = append(p,
			bpf.LoadExtension{Num: bpf.ExtVLANTagPresent},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0, SkipTrue: uint8(len(meta))})
		p = append(p, meta...)
	} else {
		p = append(p,
			bpf.LoadExtension{Num: bpf.ExtVLANTagPresent},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0, SkipTrue: 1},
			bpf.RetConstant{Val: 0})
	}
	return append(p, inlineFilter(tags, v4)...)
}

// inlineFilter is the part of tagFilter that reads the frame: the tags
// in it must be tags (outer first), then comes an ARP packet (v4) or a
// Neighbor Solicitation or Advertisement. It ends in a return.
func inlineFilter(tags []Tag, v4 bool) []bpf.Instruction {
	// Each check jumps to the final reject when it fails; the skips are
	// filled in once the program's length is known.
	var p []bpf.Instruction
	var rejects []int // the conditional jumps whose SkipTrue goes to the reject
	check := func(off, size uint32, mask, val uint32) {
		p = append(p, bpf.LoadAbsolute{Off: off, Size: int(size)})
		if mask != 0 {
			p = append(p, bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: mask})
		}
		rejects = append(rejects, len(p))
		p = append(p, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: val})
	}
	off := uint32(offType)
	for _, t := range tags {
		check(off, 2, 0, uint32(t.TPID))
		check(off+2, 2, tciID, uint32(t.ID))
		off += header.VLANLen
	}
	if v4 {
		check(off, 2, 0, uint32(header.EtherTypeARP))
	} else {
		check(off, 2, 0, uint32(header.EtherTypeIPv6))
		ip := off + 2
		check(ip+header.IPv6NextHeaderOffset, 1, 0, uint32(header.ProtoICMPv6))
		p = append(p, bpf.LoadAbsolute{Off: ip + header.IPv6Len + header.ICMPTypeOffset, Size: 1},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(header.ICMPv6NeighborSolicit), SkipTrue: 1})
		rejects = append(rejects, len(p))
		p = append(p, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(header.ICMPv6NeighborAdvert)})
	}
	p = append(p, bpf.RetConstant{Val: 0xffff}, bpf.RetConstant{Val: 0})
	reject := len(p) - 1
	for _, i := range rejects {
		j := p[i].(bpf.JumpIf)
		j.SkipTrue = uint8(reject - i - 1)
		p[i] = j
	}
	return p
}
