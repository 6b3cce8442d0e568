package header

import "encoding/binary"

// Lengths of the tunnel headers and of an MPLS label stack entry.
const (
	MPLSLen   = 4 // one label stack entry
	GREMinLen = 4 // flags, version and protocol type; + 4 for each of checksum, key, sequence
	VXLANLen  = 8
	GeneveLen = 8 // without options
)

// More EtherTypes and IP protocol numbers.
const (
	EtherTypeMPLS uint16 = 0x8847 // MPLS unicast
	EtherTypeTEB  uint16 = 0x6558 // transparent Ethernet bridging (Ethernet in GRE, Geneve)
	ProtoGRE      uint8  = 47
)

// Offsets in an MPLS label stack entry, a GRE header and a VXLAN or
// Geneve header.
const (
	mplsBottomByte = 2 // the bottom-of-stack bit is its lowest
	mplsTTL        = 3
	greFlags       = 0
	greVersion     = 1
	greProtocol    = 2
	greOptional    = 4 // checksum (and reserved), key, sequence: as the flags say
	greOptionLen   = 4
	tunnelVNI      = 4 // VNI (24 bits) and a reserved byte
)

// VXLANFlagVNI is the I flag of the VXLAN header: the VNI is valid (RFC 7348).
const VXLANFlagVNI uint8 = 0x08

// MPLS is a view of one MPLS label stack entry (RFC 3032): label (20
// bits), traffic class (3), bottom of stack (1), TTL (8).
type MPLS []byte

// Label returns the 20-bit label.
func (m MPLS) Label() uint32 { return binary.BigEndian.Uint32(m) >> 12 }

// TC returns the traffic class.
func (m MPLS) TC() uint8 { return uint8(binary.BigEndian.Uint32(m)>>9) & 7 }

// Bottom reports whether the entry is the bottom of the stack.
func (m MPLS) Bottom() bool { return m[mplsBottomByte]&1 != 0 }

// TTL returns the time to live.
func (m MPLS) TTL() uint8 { return m[mplsTTL] }

// Set writes the whole entry.
func (m MPLS) Set(label uint32, tc uint8, bottom bool, ttl uint8) {
	w := label<<12 | uint32(tc&7)<<9 | uint32(ttl)
	if bottom {
		w |= 1 << 8
	}
	binary.BigEndian.PutUint32(m, w)
}

// GRE is a view of a GRE header (RFC 2784, with the key and sequence
// number of RFC 2890).
type GRE []byte

// GRE flag bits of the first byte.
const (
	GREChecksum uint8 = 0x80
	GREKey      uint8 = 0x20
	GRESeq      uint8 = 0x10
)

// SetFlags sets the checksum, key and sequence present bits (version 0).
func (g GRE) SetFlags(csum, key, seq bool) {
	var f uint8
	if csum {
		f |= GREChecksum
	}
	if key {
		f |= GREKey
	}
	if seq {
		f |= GRESeq
	}
	g[greFlags], g[greVersion] = f, 0
}

// Len returns the header length the flags give.
func (g GRE) Len() int {
	n := GREMinLen
	for _, f := range []uint8{GREChecksum, GREKey, GRESeq} {
		if g[greFlags]&f != 0 {
			n += greOptionLen
		}
	}
	return n
}

// Protocol returns the EtherType of the payload.
func (g GRE) Protocol() uint16 { return binary.BigEndian.Uint16(g[greProtocol:]) }

// SetProtocol sets the EtherType of the payload.
func (g GRE) SetProtocol(t uint16) { binary.BigEndian.PutUint16(g[greProtocol:], t) }

// Checksum returns the checksum field (present with GREChecksum).
func (g GRE) Checksum() uint16 { return binary.BigEndian.Uint16(g[greOptional:]) }

// Key returns the key (present with GREKey).
func (g GRE) Key() uint32 {
	off := greOptional
	if g[greFlags]&GREChecksum != 0 {
		off += greOptionLen
	}
	return binary.BigEndian.Uint32(g[off:])
}

// VNI returns the 24-bit network identifier of a VXLAN or Geneve header
// (both keep it in bytes 4 to 6).
func VNI(b []byte) uint32 { return binary.BigEndian.Uint32(b[tunnelVNI:]) >> 8 }
