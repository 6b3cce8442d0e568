package recv

import (
	"encoding/binary"

	"github.com/wpg-dev/wpg/frame"
)

// Decoder extracts the wpg signature from one received frame. ok is true
// when the frame carries a signature; corrupt is true when it carries one
// (or claims to be a wpg frame) but a header or checksum check failed. A
// frame with ok == false and corrupt == false is counted as unsigned.
type Decoder func(frame []byte) (sig frame.Signature, ok bool, corrupt bool)

// EtherType values DecodePacket understands.
const (
	etherIPv4  = 0x0800
	etherARP   = 0x0806
	etherVLAN  = 0x8100
	etherQinQ  = 0x88a8
	etherQinQ1 = 0x9100
	etherIPv6  = 0x86dd
)

// IP protocol numbers DecodePacket verifies.
const (
	protoICMP   = 1
	protoTCP    = 6
	protoUDP    = 17
	protoICMPv6 = 58
)

// DecodePacket is the Decoder for Ethernet frames (network backends): the
// signature is the last frame.SignatureLen bytes of the frame; the frame is
// corrupt when its headers do not parse (Ethernet, up to 4 VLAN tags, IPv4
// or IPv6 with extension headers, UDP/TCP/ICMP/ICMPv6), when the IPv4
// header checksum is wrong, or when the UDP, TCP, ICMP or ICMPv6 checksum
// is wrong. Frames of other EtherTypes (ARP, …) are checked for the
// signature only. Fragments are checked up to the IP header.
func DecodePacket(b []byte) (sig frame.Signature, ok bool, corrupt bool) {
	sig, ok = frame.ParseSignature(b)
	if !ok {
		return sig, false, false
	}
	return sig, true, !packetValid(b)
}

// ipFragment reports whether an Ethernet frame carries an IP fragment
// (IPv4 with MF or a fragment offset, IPv6 with a Fragment header), and
// whether it is a datagram's last fragment (more-fragments clear, at an
// offset: where wpg's signature goes). It reads headers only.
func ipFragment(b []byte) (fragment, last bool) {
	if len(b) < 14 {
		return false, false
	}
	off := 12
	et := binary.BigEndian.Uint16(b[off:])
	for tags := 0; et == etherVLAN || et == etherQinQ || et == etherQinQ1; tags++ {
		if tags == 4 || len(b) < off+6 {
			return false, false
		}
		off += 4
		et = binary.BigEndian.Uint16(b[off:])
	}
	p := b[off+2:]
	switch et {
	case etherIPv4:
		if len(p) < 20 {
			return false, false
		}
		f := binary.BigEndian.Uint16(p[6:])
		return f&0x3fff != 0, f&0x2000 == 0 && f&0x1fff != 0
	case etherIPv6:
		if len(p) < 40 {
			return false, false
		}
		next, rest := p[6], p[40:]
		for {
			switch next {
			case 0, 43, 60:
				if len(rest) < 8 || (int(rest[1])+1)*8 > len(rest) {
					return false, false
				}
				next, rest = rest[0], rest[(int(rest[1])+1)*8:]
				continue
			case 44:
				if len(rest) < 8 {
					return false, false
				}
				f := binary.BigEndian.Uint16(rest[2:])
				return true, f&1 == 0 && f>>3 != 0
			}
			return false, false
		}
	}
	return false, false
}

// packetValid parses the headers of an Ethernet frame and verifies its
// checksums.
func packetValid(b []byte) bool {
	if len(b) < 14 {
		return false
	}
	off := 12
	et := binary.BigEndian.Uint16(b[off:])
	for tags := 0; et == etherVLAN || et == etherQinQ || et == etherQinQ1; tags++ {
		if tags == 4 || len(b) < off+6 {
			return false
		}
		off += 4
		et = binary.BigEndian.Uint16(b[off:])
	}
	off += 2
	switch et {
	case etherIPv4:
		return ipv4Valid(b[off:])
	case etherIPv6:
		return ipv6Valid(b[off:])
	}
	return true
}

func ipv4Valid(p []byte) bool {
	if len(p) < 20 || p[0]>>4 != 4 {
		return false
	}
	ihl := int(p[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(p[2:]))
	if ihl < 20 || total < ihl || total > len(p) {
		return false
	}
	if fold(sum(p[:ihl], 0)) != 0xffff {
		return false
	}
	if binary.BigEndian.Uint16(p[6:])&0x3fff != 0 { // MF or fragment offset
		return true
	}
	l4 := p[ihl:total]
	proto := p[9]
	var pseudo uint64
	if proto == protoUDP || proto == protoTCP {
		pseudo = sum(p[12:20], 0) + uint64(proto) + uint64(len(l4))
	}
	switch proto {
	case protoUDP:
		if len(l4) < 8 || int(binary.BigEndian.Uint16(l4[4:])) != len(l4) {
			return false
		}
		if binary.BigEndian.Uint16(l4[6:]) == 0 { // no checksum (IPv4 only)
			return true
		}
		return fold(sum(l4, pseudo)) == 0xffff
	case protoTCP:
		return len(l4) >= 20 && fold(sum(l4, pseudo)) == 0xffff
	case protoICMP:
		return len(l4) >= 8 && fold(sum(l4, 0)) == 0xffff
	}
	return true
}

func ipv6Valid(p []byte) bool {
	if len(p) < 40 || p[0]>>4 != 6 {
		return false
	}
	plen := int(binary.BigEndian.Uint16(p[4:]))
	if 40+plen > len(p) {
		return false
	}
	next := p[6]
	rest := p[40 : 40+plen]
exthdrs:
	for {
		switch next {
		case 0, 43, 60: // hop-by-hop, routing, destination options
			if len(rest) < 8 {
				return false
			}
			n := (int(rest[1]) + 1) * 8
			if n > len(rest) {
				return false
			}
			next, rest = rest[0], rest[n:]
			continue
		case 44: // fragment: the L4 checksum covers the reassembled packet
			return len(rest) >= 8
		}
		break exthdrs
	}
	pseudo := sum(p[8:40], 0) + uint64(next) + uint64(len(rest))
	switch next {
	case protoUDP:
		if len(rest) < 8 || int(binary.BigEndian.Uint16(rest[4:])) != len(rest) {
			return false
		}
		return fold(sum(rest, pseudo)) == 0xffff
	case protoTCP:
		return len(rest) >= 20 && fold(sum(rest, pseudo)) == 0xffff
	case protoICMPv6:
		return len(rest) >= 4 && fold(sum(rest, pseudo)) == 0xffff
	}
	return true
}

// sum adds b as big-endian 16-bit words to acc (ones' complement sum,
// unfolded); an odd last byte is padded with zero.
func sum(b []byte, acc uint64) uint64 {
	for len(b) >= 8 {
		v := binary.BigEndian.Uint64(b)
		acc += v>>48 + v>>32&0xffff + v>>16&0xffff + v&0xffff
		b = b[8:]
	}
	for len(b) >= 2 {
		acc += uint64(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		acc += uint64(b[0]) << 8
	}
	return acc
}

// fold reduces a ones' complement sum to 16 bits.
func fold(acc uint64) uint16 {
	for acc > 0xffff {
		acc = acc>>16 + acc&0xffff
	}
	return uint16(acc)
}
