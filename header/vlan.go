package header

import "encoding/binary"

// VLANLen is the length of an 802.1Q tag: TCI and the inner EtherType.
const VLANLen = 4

// EtherTypes of VLAN tags.
const (
	EtherTypeVLAN uint16 = 0x8100 // 802.1Q customer tag
	EtherTypeQinQ uint16 = 0x88a8 // 802.1ad service tag
)

// VLAN is a view of an 802.1Q tag as it follows the EtherType that announced
// it: the tag control information (TCI) and the next EtherType.
type VLAN []byte

// TCI returns the tag control information (PCP, DEI, VLAN id).
func (v VLAN) TCI() uint16 { return binary.BigEndian.Uint16(v[0:]) }

// ID returns the 12-bit VLAN identifier.
func (v VLAN) ID() uint16 { return v.TCI() & 0x0fff }

// PCP returns the 3-bit priority code point.
func (v VLAN) PCP() uint8 { return uint8(v.TCI() >> 13) }

// DEI returns the drop eligible indicator.
func (v VLAN) DEI() bool { return v.TCI()&0x1000 != 0 }

// Type returns the EtherType that follows the tag.
func (v VLAN) Type() uint16 { return binary.BigEndian.Uint16(v[2:]) }

// SetTCI sets PCP, DEI and VLAN id at once.
func (v VLAN) SetTCI(pcp uint8, dei bool, id uint16) {
	t := uint16(pcp&7)<<13 | id&0x0fff
	if dei {
		t |= 0x1000
	}
	binary.BigEndian.PutUint16(v[0:], t)
}

// SetType sets the EtherType that follows the tag.
func (v VLAN) SetType(t uint16) { binary.BigEndian.PutUint16(v[2:], t) }
