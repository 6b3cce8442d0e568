package nexthop

import (
	"strings"

	"golang.org/x/net/bpf"

	"github.com/wpg-dev/wpg/header"
	"github.com/wpg-dev/wpg/internal/vlanbpf"
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

// tagFilter is the socket filter of a tagged port's agent (a socket that
// sees all of the port's frames): it passes the port's neighbour
// messages (ARP for an IPv4 port; Neighbor Solicitations and
// Advertisements for an IPv6 one) that carry exactly the tag stack tags,
// the outer tag in the frame or in its metadata (vlanbpf.Filter), and
// nothing else.
func tagFilter(tags []Tag, v4 bool) []bpf.Instruction {
	stack := make([]vlanbpf.Tag, len(tags))
	for i, t := range tags {
		stack[i] = vlanbpf.Tag{TPID: t.TPID, ID: t.ID}
	}
	return vlanbpf.Filter(stack, func(off uint32) []bpf.Instruction { return neighbourFilter(off, v4) })
}

// neighbourFilter passes an ARP packet (v4) or a Neighbor Solicitation
// or Advertisement whose EtherType is at offset off of the frame, and
// rejects anything else.
func neighbourFilter(off uint32, v4 bool) []bpf.Instruction {
	var p []bpf.Instruction
	var rejects []int // the jumps whose SkipTrue goes to the reject
	check := func(off, size uint32, val uint32) {
		p = append(p, bpf.LoadAbsolute{Off: off, Size: int(size)})
		rejects = append(rejects, len(p))
		p = append(p, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: val})
	}
	if v4 {
		check(off, 2, uint32(header.EtherTypeARP))
	} else {
		check(off, 2, uint32(header.EtherTypeIPv6))
		ip := off + 2
		check(ip+header.IPv6NextHeaderOffset, 1, uint32(header.ProtoICMPv6))
		p = append(p, bpf.LoadAbsolute{Off: ip + header.IPv6Len + header.ICMPTypeOffset, Size: 1},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(header.ICMPv6NeighborSolicit), SkipTrue: 1})
		rejects = append(rejects, len(p))
		p = append(p, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(header.ICMPv6NeighborAdvert)})
	}
	p = append(p, bpf.RetConstant{Val: vlanbpf.Accept}, bpf.RetConstant{Val: vlanbpf.Reject})
	vlanbpf.SkipTo(p, rejects, len(p)-1)
	return p
}
