package header

import (
	"encoding/binary"
	"fmt"
)

// VLANLen is the length of an 802.1Q tag: TCI and the inner EtherType.
const VLANLen = 4

// EtherTypes of VLAN tags.
const (
	EtherTypeVLAN uint16 = 0x8100 // 802.1Q customer tag
	EtherTypeQinQ uint16 = 0x88a8 // 802.1ad service tag
	// EtherTypeQinQ9100 is the service tag of before 802.1ad that some
	// equipment still sends; SkipVLANs walks past it too.
	EtherTypeQinQ9100 uint16 = 0x9100
)

// MaxVLANTags is the most tags SkipVLANs walks past.
const MaxVLANTags = 4

// Offsets in an 802.1Q tag (after the EtherType that announced it) and
// the bits of its TCI.
const (
	vlanTCI  = 0
	vlanType = 2
	tciID    = 0x0fff
	tciDEI   = 0x1000
	tciPCP   = 13 // shift
)

// VLAN is a view of an 802.1Q tag as it follows the EtherType that announced
// it: the tag control information (TCI) and the next EtherType.
type VLAN []byte

// TCI returns the tag control information (PCP, DEI, VLAN id).
func (v VLAN) TCI() uint16 { return binary.BigEndian.Uint16(v[vlanTCI:]) }

// ID returns the 12-bit VLAN identifier.
func (v VLAN) ID() uint16 { return v.TCI() & tciID }

// PCP returns the 3-bit priority code point.
func (v VLAN) PCP() uint8 { return uint8(v.TCI() >> tciPCP) }

// DEI returns the drop eligible indicator.
func (v VLAN) DEI() bool { return v.TCI()&tciDEI != 0 }

// Type returns the EtherType that follows the tag.
func (v VLAN) Type() uint16 { return binary.BigEndian.Uint16(v[vlanType:]) }

// SetTCI sets PCP, DEI and VLAN id at once.
func (v VLAN) SetTCI(pcp uint8, dei bool, id uint16) {
	t := uint16(pcp&7)<<tciPCP | id&tciID
	if dei {
		t |= tciDEI
	}
	binary.BigEndian.PutUint16(v[vlanTCI:], t)
}

// SetType sets the EtherType that follows the tag.
func (v VLAN) SetType(t uint16) { binary.BigEndian.PutUint16(v[vlanType:], t) }

// IsVLAN reports whether EtherType et announces an 802.1Q or 802.1ad tag
// (EtherTypeVLAN, EtherTypeQinQ): the tags templates write, and those a
// network path lets a frame carry beyond the untagged MTU.
func IsVLAN(et uint16) bool { return et == EtherTypeVLAN || et == EtherTypeQinQ }

// VLANTagged reports whether the Ethernet frame b begins with a VLAN tag
// (its EtherType IsVLAN); false when b is shorter than an Ethernet header.
func VLANTagged(b []byte) bool {
	return len(b) >= EthernetLen && IsVLAN(Ethernet(b).Type())
}

// SkipVLANs walks the Ethernet frame b past its VLAN tags (802.1Q,
// 802.1ad and EtherTypeQinQ9100, up to MaxVLANTags) and returns the
// EtherType after them and the offset of what it announces (the IP
// header). ok is false when b is shorter than its headers or has more
// tags than MaxVLANTags.
func SkipVLANs(b []byte) (et uint16, off int, ok bool) {
	if len(b) < EthernetLen {
		return 0, 0, false
	}
	at := ethType // the EtherType field
	et = binary.BigEndian.Uint16(b[at:])
	for tags := 0; IsVLAN(et) || et == EtherTypeQinQ9100; tags++ {
		if tags == MaxVLANTags || len(b) < at+VLANLen+2 {
			return 0, 0, false
		}
		at += VLANLen
		et = binary.BigEndian.Uint16(b[at:])
	}
	return et, at + 2, true
}

// InsertVLAN puts a tag (tpid, tci) into the Ethernet frame that begins
// at b[mac:], in the VLANLen bytes before it, which the caller has checked
// are free: the two addresses move VLANLen bytes towards the start and the
// tag follows them, before the frame's EtherType. It returns the tagged
// frame's start, mac-VLANLen.
func InsertVLAN(b []byte, mac int, tpid, tci uint16) int {
	start := mac - VLANLen
	copy(b[start:start+ethType], b[mac:mac+ethType])
	binary.BigEndian.PutUint16(b[start+ethType:], tpid)
	binary.BigEndian.PutUint16(b[start+EthernetLen+vlanTCI:], tci)
	return start
}

// FormatVLANTag writes a VLAN tag by its TPID and VLAN id as wpg's
// messages and reports do: "802.1Q 100", "802.1ad 10", or for another
// TPID "0x9100 10".
func FormatVLANTag(tpid, id uint16) string {
	switch tpid {
	case EtherTypeVLAN:
		return fmt.Sprintf("802.1Q %d", id)
	case EtherTypeQinQ:
		return fmt.Sprintf("802.1ad %d", id)
	}
	return fmt.Sprintf("%#04x %d", tpid, id)
}
