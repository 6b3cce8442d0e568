// Package vlanbpf builds the classic BPF socket filters that pass the
// frames of one VLAN tag stack: a packet socket of all of a link's frames
// (ETH_P_ALL) sees a tagged frame with its outer tag either still in the
// frame or, on receive and with a NIC's VLAN offload, moved by the kernel
// into the frame's metadata (SKF_AD_VLAN_TAG_PRESENT, _TAG, _TPID); the
// filter accepts the stack either way. wpg's next-hop agent (package
// nexthop) and the test bed's VLAN relay (internal/netns) use it.
package vlanbpf

import "golang.org/x/net/bpf"

// Tag is one VLAN tag: its TPID (0x8100 for 802.1Q, 0x88a8 for an
// 802.1ad service tag) and its 12-bit VLAN id.
type Tag struct {
	TPID, ID uint16
}

// Frame offsets and TCI bits the filter reads (an Ethernet II header
// and 802.1Q tags).
const (
	etherTypeOffset = 12     // after the two addresses
	tagLen          = 4      // TPID and TCI
	idMask          = 0x0fff // the VLAN id in a TCI
)

// Accept and Reject are what a filter returns for a frame it passes
// (all of it) and one it drops.
const (
	Accept = 0xffff
	Reject = 0
)

// Filter is the program that passes the frames that carry exactly the
// tag stack tags (outer first; none: untagged frames only) and that then
// pass after. after gets the offset in the frame of the EtherType that
// follows the tags and returns the checks of what comes after them; it
// is called once for each place the outer tag may be (so twice for a
// tagged stack) and must end each of its paths in a return.
func Filter(tags []Tag, after func(etherType uint32) []bpf.Instruction) []bpf.Instruction {
	// Without the outer tag in the metadata the frame holds them all.
	inFrame := inline(tags, etherTypeOffset, after)
	var meta []bpf.Instruction
	if len(tags) == 0 {
		meta = []bpf.Instruction{bpf.RetConstant{Val: Reject}} // a tagged frame
	} else {
		// The metadata's tag is the outer one; the frame holds the rest.
		meta = append([]bpf.Instruction{
			bpf.LoadExtension{Num: bpf.ExtVLANProto},
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(tags[0].TPID), SkipTrue: 3},
			bpf.LoadExtension{Num: bpf.ExtVLANTag},
			bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: idMask},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(tags[0].ID), SkipTrue: 1},
			bpf.RetConstant{Val: Reject},
		}, inline(tags[1:], etherTypeOffset, after)...)
	}
	p := []bpf.Instruction{
		bpf.LoadExtension{Num: bpf.ExtVLANTagPresent},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0, SkipTrue: uint8(len(meta))},
	}
	p = append(p, meta...)
	return append(p, inFrame...)
}

// inline checks that the frame holds tags from offset off on, then runs
// after's checks on what follows them; a tag that differs jumps to the
// reject at the end (after's own paths end in returns).
func inline(tags []Tag, off uint32, after func(uint32) []bpf.Instruction) []bpf.Instruction {
	var p []bpf.Instruction
	var rejects []int // the jumps whose SkipTrue goes to the final reject
	check := func(off uint32, mask, val uint32) {
		p = append(p, bpf.LoadAbsolute{Off: off, Size: 2})
		if mask != 0 {
			p = append(p, bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: mask})
		}
		rejects = append(rejects, len(p))
		p = append(p, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: val})
	}
	for _, t := range tags {
		check(off, 0, uint32(t.TPID))
		check(off+2, idMask, uint32(t.ID))
		off += tagLen
	}
	p = append(p, after(off)...)
	p = append(p, bpf.RetConstant{Val: Reject})
	SkipTo(p, rejects, len(p)-1)
	return p
}

// SkipTo makes the conditional jumps of p at the indexes jumps go, when
// true, to the instruction at index to (after them).
func SkipTo(p []bpf.Instruction, jumps []int, to int) {
	for _, i := range jumps {
		j := p[i].(bpf.JumpIf)
		j.SkipTrue = uint8(to - i - 1)
		p[i] = j
	}
}
