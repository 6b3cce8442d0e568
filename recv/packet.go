package recv

import (
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/header"
)

// Decoder extracts the wpg signature from one received frame. ok is true
// when the frame carries a signature; corrupt is true when it carries one
// (or claims to be a wpg frame) but a header or checksum check failed. A
// frame with ok == false and corrupt == false is counted as unsigned.
type Decoder func(frame []byte) (sig frame.Signature, ok bool, corrupt bool)

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
	et, off, ok := header.SkipVLANs(b)
	if !ok {
		return false, false
	}
	p := b[off:]
	switch et {
	case header.EtherTypeIPv4:
		if len(p) < header.IPv4MinLen {
			return false, false
		}
		h := header.IPv4(p)
		more, at := h.MoreFragments(), h.FragmentOffset()
		return more || at != 0, !more && at != 0
	case header.EtherTypeIPv6:
		if len(p) < header.IPv6Len {
			return false, false
		}
		next, rest, ok := header.SkipIPv6Extensions(header.IPv6(p).NextHeader(), p[header.IPv6Len:])
		if !ok || next != header.ProtoIPv6Fragment || len(rest) < header.IPv6FragmentLen {
			return false, false
		}
		f := header.IPv6Fragment(rest)
		return true, !f.MoreFragments() && f.FragmentOffset() != 0
	}
	return false, false
}

// packetValid parses the headers of an Ethernet frame and verifies its
// checksums.
func packetValid(b []byte) bool {
	et, off, ok := header.SkipVLANs(b)
	if !ok {
		return false
	}
	switch et {
	case header.EtherTypeIPv4:
		return ipv4Valid(b[off:])
	case header.EtherTypeIPv6:
		return ipv6Valid(b[off:])
	}
	return true
}

func ipv4Valid(p []byte) bool {
	if len(p) < header.IPv4MinLen || header.IPVersion(p) != 4 {
		return false
	}
	h := header.IPv4(p)
	ihl, total := h.IHL(), int(h.TotalLength())
	if ihl < header.IPv4MinLen || total < ihl || total > len(p) {
		return false
	}
	if !header.ChecksumValid(p[:ihl], 0) {
		return false
	}
	if h.MoreFragments() || h.FragmentOffset() != 0 {
		return true
	}
	l4 := p[ihl:total]
	switch h.Protocol() {
	case header.ProtoUDP:
		u := header.UDP(l4)
		if len(l4) < header.UDPLen || int(u.Length()) != len(l4) {
			return false
		}
		if u.Checksum() == 0 { // no checksum (IPv4 only)
			return true
		}
		return header.ChecksumValid(l4, h.PseudoSum(len(l4)))
	case header.ProtoTCP:
		return len(l4) >= header.TCPMinLen && header.ChecksumValid(l4, h.PseudoSum(len(l4)))
	case header.ProtoICMPv4:
		return len(l4) >= header.ICMPEchoLen && header.ChecksumValid(l4, 0)
	}
	return true
}

func ipv6Valid(p []byte) bool {
	if len(p) < header.IPv6Len || header.IPVersion(p) != 6 {
		return false
	}
	h := header.IPv6(p)
	plen := int(h.PayloadLength())
	if header.IPv6Len+plen > len(p) {
		return false
	}
	next, rest, ok := header.SkipIPv6Extensions(h.NextHeader(), p[header.IPv6Len:header.IPv6Len+plen])
	if !ok {
		return false
	}
	if next == header.ProtoIPv6Fragment { // the L4 checksum covers the reassembled packet
		return len(rest) >= header.IPv6FragmentLen
	}
	pseudo := h.PseudoSum(next, len(rest))
	switch next {
	case header.ProtoUDP:
		if len(rest) < header.UDPLen || int(header.UDP(rest).Length()) != len(rest) {
			return false
		}
		return header.ChecksumValid(rest, pseudo)
	case header.ProtoTCP:
		return len(rest) >= header.TCPMinLen && header.ChecksumValid(rest, pseudo)
	case header.ProtoICMPv6:
		return len(rest) >= header.ICMPv6MinLen && header.ChecksumValid(rest, pseudo)
	}
	return true
}
