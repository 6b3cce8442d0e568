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
	macLen  = 6
)

// Ethernet is a view of an Ethernet II header.
type Ethernet []byte

// Dst returns the destination MAC address.
func (e Ethernet) Dst() []byte { return e[ethDst : ethDst+macLen] }

// Src returns the source MAC address.
func (e Ethernet) Src() []byte { return e[ethSrc : ethSrc+macLen] }

// Type returns the EtherType.
func (e Ethernet) Type() uint16 { return binary.BigEndian.Uint16(e[ethType:]) }

// SetDst sets the destination MAC address.
func (e Ethernet) SetDst(mac []byte) { copy(e[ethDst:ethDst+macLen], mac) }

// SetSrc sets the source MAC address.
func (e Ethernet) SetSrc(mac []byte) { copy(e[ethSrc:ethSrc+macLen], mac) }

// SetType sets the EtherType.
func (e Ethernet) SetType(t uint16) { binary.BigEndian.PutUint16(e[ethType:], t) }
