package header

import "encoding/binary"

// EthernetLen is the length of an Ethernet II header: destination,
// source, EtherType.
const EthernetLen = 14

// EtherTypeLocal is the EtherType of IEEE 802 local experimental use.
const EtherTypeLocal uint16 = 0x88b5

// Offsets in an Ethernet II header.
const (
	ethDst  = 0
	ethSrc  = 6
	ethType = 12 // after the two addresses
)

// EthernetAddrLen is the length of a MAC address.
const EthernetAddrLen = 6

// EtherTypeOffset is where an Ethernet II header's EtherType (or the
// TPID of its first VLAN tag) sits: after the two addresses.
const EtherTypeOffset = ethType

// Ethernet is a view of an Ethernet II header.
type Ethernet []byte

// Dst returns the destination MAC address.
func (e Ethernet) Dst() []byte { return e[ethDst : ethDst+EthernetAddrLen] }

// Src returns the source MAC address.
func (e Ethernet) Src() []byte { return e[ethSrc : ethSrc+EthernetAddrLen] }

// Type returns the EtherType.
func (e Ethernet) Type() uint16 { return binary.BigEndian.Uint16(e[ethType:]) }

// SetDst sets the destination MAC address.
func (e Ethernet) SetDst(mac []byte) { copy(e[ethDst:ethDst+EthernetAddrLen], mac) }

// SetSrc sets the source MAC address.
func (e Ethernet) SetSrc(mac []byte) { copy(e[ethSrc:ethSrc+EthernetAddrLen], mac) }

// SetType sets the EtherType.
func (e Ethernet) SetType(t uint16) { binary.BigEndian.PutUint16(e[ethType:], t) }
