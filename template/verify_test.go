package template

import (
	"encoding/binary"
	"testing"

	"github.com/wpg-dev/wpg/header"
)

// csumCheck is one checksum found in a frame: the layer ("ipv4", "udp",
// "tcp", "icmp", "icmpv6", "gre", with "inner." for each tunnel it is
// inside), the offset of its field, and whether it verifies.
type csumCheck struct {
	what  string
	field int
	ok    bool
}

// frameChecksums walks frame f header by header with the header views,
// independently of the layout that wrote it: Ethernet, 802.1Q/802.1ad
// tags, MPLS labels (the payload guessed from its first nibble, as tshark
// does), IPv4/IPv6, UDP (VXLAN on 4789, Geneve on 6081), TCP, ICMP, GRE,
// and the Ethernet or IP frames they carry. It checks every length field
// against the frame and returns every checksum it met. A UDP checksum of
// 0 over IPv4 (none) is not listed.
func frameChecksums(t testing.TB, f []byte) []csumCheck {
	t.Helper()
	var out []csumCheck
	pre := ""
	off := header.EthernetLen
	et := header.Ethernet(f).Type()
	for {
		var l3 int
		var v6 bool
		var proto uint8
		switch et {
		case header.EtherTypeVLAN, header.EtherTypeQinQ:
			et = header.VLAN(f[off:]).Type()
			off += header.VLANLen
			continue
		case header.EtherTypeMPLS:
			for {
				m := header.MPLS(f[off:])
				off += header.MPLSLen
				if m.Bottom() {
					break
				}
			}
			switch f[off] >> 4 {
			case 4:
				et = header.EtherTypeIPv4
			case 6:
				et = header.EtherTypeIPv6
			default:
				return out
			}
			continue
		case header.EtherTypeTEB:
			et = header.Ethernet(f[off:]).Type()
			off += header.EthernetLen
			continue
		case header.EtherTypeIPv4:
			h := header.IPv4(f[off:])
			out = append(out, csumCheck{pre + "ipv4", off + 10, header.Checksum(h[:20], 0) == 0})
			if int(h.TotalLength()) != len(f)-off {
				t.Fatalf("%sipv4 total length %d, the frame has %d\n%x", pre, h.TotalLength(), len(f)-off, f)
			}
			l3, proto = off, h.Protocol()
			off += header.IPv4MinLen
			if binary.BigEndian.Uint16(h[6:])&0x3fff != 0 {
				return out // a fragment: its L4 is the datagram's (TestFragments reassembles)
			}
		case header.EtherTypeIPv6:
			h := header.IPv6(f[off:])
			if int(h.PayloadLength()) != len(f)-off-header.IPv6Len {
				t.Fatalf("%sipv6 payload length %d, the frame has %d\n%x", pre, h.PayloadLength(), len(f)-off-header.IPv6Len, f)
			}
			l3, v6, proto = off, true, h.NextHeader()
			off += header.IPv6Len
		default:
			return out
		}
		seg := f[off:]
		pseudo := func(p uint8) uint64 {
			if v6 {
				return header.IPv6(f[l3:]).PseudoSum(p, len(seg))
			}
			return header.IPv4(f[l3:]).PseudoSum(len(seg))
		}
		switch proto {
		case header.ProtoUDP:
			u := header.UDP(seg)
			if int(u.Length()) != len(seg) {
				t.Fatalf("%sudp length %d, have %d\n%x", pre, u.Length(), len(seg), f)
			}
			if u.Checksum() != 0 || v6 {
				out = append(out, csumCheck{pre + "udp", off + 6, header.Checksum(seg, pseudo(proto)) == 0})
			}
			switch u.DstPort() {
			case PortVXLAN:
				if seg[8] != header.VXLANFlagVNI {
					t.Fatalf("%svxlan flags %#x", pre, seg[8])
				}
				off += header.UDPLen + header.VXLANLen
				et, pre = header.EtherTypeTEB, pre+"inner."
				continue
			case PortGeneve:
				g := seg[header.UDPLen:]
				off += header.UDPLen + header.GeneveLen + int(g[0]&0x3f)*4
				et, pre = binary.BigEndian.Uint16(g[2:]), pre+"inner."
				continue
			}
			return out
		case header.ProtoTCP:
			out = append(out, csumCheck{pre + "tcp", off + 16, header.Checksum(seg, pseudo(proto)) == 0})
			return out
		case header.ProtoICMPv4:
			out = append(out, csumCheck{pre + "icmp", off + 2, header.Checksum(seg, 0) == 0})
			return out
		case header.ProtoICMPv6:
			out = append(out, csumCheck{pre + "icmpv6", off + 2, header.Checksum(seg, pseudo(proto)) == 0})
			return out
		case header.ProtoGRE:
			g := header.GRE(seg)
			if g[0]&header.GREChecksum != 0 {
				out = append(out, csumCheck{pre + "gre", off + 4, header.Checksum(seg, 0) == 0})
			}
			off += g.Len()
			et, pre = g.Protocol(), pre+"inner."
			continue
		}
		return out
	}
}

// checkSums fails unless every checksum of f verifies except those named
// in bad, which must not.
func checkSums(t testing.TB, f []byte, bad ...string) {
	t.Helper()
	for _, c := range frameChecksums(t, f) {
		want := true
		for _, b := range bad {
			if b == c.what {
				want = false
			}
		}
		if c.ok != want {
			t.Fatalf("%s checksum at offset %d verifies: %v, want %v\n%x", c.what, c.field, c.ok, want, f)
		}
	}
}
