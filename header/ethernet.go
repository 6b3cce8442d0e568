package header

import "encoding/binary"

// EthernetLen is the length of an Ethernet II header: destination,
// source, EtherType.
const EthernetLen = 14

// EtherTypeLocal is the EtherType of IEEE 802 local experimental use.
const EtherTypeLocal uint16 = 0x88b5

// Ethernet is a view of an Ethernet II header.
type Ethernet []byte

// Dst returns the destination MAC address.
func (e Ethernet) Dst() []byte { return e[0:6] }

// Src returns the source MAC address.
func (e Ethernet) Src() []byte { return e[6:12] }

// Type returns the EtherType.
func (e Ethernet) Type() uint16 { return binary.BigEndian.Uint16(e[12:]) }

// SetDst sets the destination MAC address.
func (e Ethernet) SetDst(mac []byte) { copy(e[0:6], mac) }

// SetSrc sets the source MAC address.
func (e Ethernet) SetSrc(mac []byte) { copy(e[6:12], mac) }

// SetType sets the EtherType.
func (e Ethernet) SetType(t uint16) { binary.BigEndian.PutUint16(e[12:], t) }
