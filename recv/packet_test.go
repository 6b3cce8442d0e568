package recv

import (
	"net"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/wpg-dev/wpg/frame"
)

var (
	srcMAC = net.HardwareAddr{0x02, 0, 0, 0, 0, 1}
	dstMAC = net.HardwareAddr{0x02, 0, 0, 0, 0, 2}
	src4   = net.IP{198, 18, 0, 1}
	dst4   = net.IP{198, 19, 0, 1}
	src6   = net.ParseIP("2001:db8::1")
	dst6   = net.ParseIP("2001:db8::2")
)

// signedPayload returns n bytes of payload ending with a signature.
func signedPayload(n int, seq uint64) gopacket.Payload {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i)
	}
	frame.PutSignature(p, frame.Signature{Stream: 3, Seq: seq, TxNs: 12345})
	return p
}

func build(t *testing.T, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	for _, l := range ls {
		if nl, ok := l.(interface {
			SetNetworkLayerForChecksum(gopacket.NetworkLayer) error
		}); ok {
			for _, n := range ls {
				if net, ok := n.(gopacket.NetworkLayer); ok {
					if err := nl.SetNetworkLayerForChecksum(net); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

func packets(t *testing.T) map[string][]byte {
	eth4 := &layers.Ethernet{SrcMAC: srcMAC, DstMAC: dstMAC, EthernetType: layers.EthernetTypeIPv4}
	eth6 := &layers.Ethernet{SrcMAC: srcMAC, DstMAC: dstMAC, EthernetType: layers.EthernetTypeIPv6}
	ip4 := func(p layers.IPProtocol) *layers.IPv4 {
		return &layers.IPv4{Version: 4, TTL: 64, Protocol: p, SrcIP: src4, DstIP: dst4}
	}
	ip6 := func(p layers.IPProtocol) *layers.IPv6 {
		return &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: p, SrcIP: src6, DstIP: dst6}
	}
	return map[string][]byte{
		"udp4":     build(t, eth4, ip4(layers.IPProtocolUDP), &layers.UDP{SrcPort: 1000, DstPort: 2000}, signedPayload(22, 1)),
		"udp4-odd": build(t, eth4, ip4(layers.IPProtocolUDP), &layers.UDP{SrcPort: 1000, DstPort: 2000}, signedPayload(1459, 1)),
		"tcp4":     build(t, eth4, ip4(layers.IPProtocolTCP), &layers.TCP{SrcPort: 1, DstPort: 2, Seq: 7, SYN: true, Window: 100}, signedPayload(40, 2)),
		"icmp4":    build(t, eth4, ip4(layers.IPProtocolICMPv4), &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(8, 0), Id: 1, Seq: 1}, signedPayload(32, 3)),
		"udp6":     build(t, eth6, ip6(layers.IPProtocolUDP), &layers.UDP{SrcPort: 1000, DstPort: 2000}, signedPayload(30, 4)),
		"tcp6":     build(t, eth6, ip6(layers.IPProtocolTCP), &layers.TCP{SrcPort: 1, DstPort: 2, ACK: true, Window: 100}, signedPayload(30, 5)),
		"icmp6":    build(t, eth6, ip6(layers.IPProtocolICMPv6), &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(128, 0)}, signedPayload(36, 6)),
		"vlan-udp4": build(t, &layers.Ethernet{SrcMAC: srcMAC, DstMAC: dstMAC, EthernetType: layers.EthernetTypeDot1Q},
			&layers.Dot1Q{VLANIdentifier: 100, Type: layers.EthernetTypeDot1Q}, &layers.Dot1Q{VLANIdentifier: 200, Type: layers.EthernetTypeIPv4},
			ip4(layers.IPProtocolUDP), &layers.UDP{SrcPort: 1, DstPort: 2}, signedPayload(26, 7)),
		"arp": build(t, &layers.Ethernet{SrcMAC: srcMAC, DstMAC: dstMAC, EthernetType: layers.EthernetTypeARP},
			&layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4, HwAddressSize: 6, ProtAddressSize: 4,
				Operation: 1, SourceHwAddress: srcMAC, SourceProtAddress: src4, DstHwAddress: make([]byte, 6), DstProtAddress: dst4},
			signedPayload(20, 8)),
	}
}

func TestDecodePacketValid(t *testing.T) {
	for name, b := range packets(t) {
		sig, ok, corrupt := DecodePacket(b)
		if !ok || corrupt || sig.Stream != 3 || sig.TxNs != 12345 {
			t.Errorf("%s: ok=%v corrupt=%v sig=%+v", name, ok, corrupt, sig)
		}
	}
}

func TestDecodePacketCorrupt(t *testing.T) {
	for name, b := range packets(t) {
		if name == "arp" {
			continue // no checksum to fail
		}
		// Flip one payload bit before the signature: the L4 checksum fails.
		c := append([]byte(nil), b...)
		c[len(c)-frame.SignatureLen-1] ^= 0x10
		if _, ok, corrupt := DecodePacket(c); !ok || !corrupt {
			t.Errorf("%s payload bit flip: ok=%v corrupt=%v", name, ok, corrupt)
		}
		// Flip a bit in the signature's sequence number.
		c = append([]byte(nil), b...)
		c[len(c)-10] ^= 0x01
		if _, ok, corrupt := DecodePacket(c); !ok || !corrupt {
			t.Errorf("%s signature bit flip: ok=%v corrupt=%v", name, ok, corrupt)
		}
	}
	b := packets(t)["udp4"]
	c := append([]byte(nil), b...)
	c[14+8] ^= 1 // IPv4 TTL: header checksum fails
	if _, _, corrupt := DecodePacket(c); !corrupt {
		t.Error("IPv4 header checksum not checked")
	}
	c = append([]byte(nil), b...)
	c[14+3] += 40 // IPv4 total length beyond the frame
	if _, _, corrupt := DecodePacket(c); !corrupt {
		t.Error("IPv4 total length not checked")
	}
	c = append([]byte(nil), b...)
	c[14] = 0x65 // IPv6 version under an IPv4 EtherType
	if _, _, corrupt := DecodePacket(c); !corrupt {
		t.Error("IP version not checked")
	}
}

func TestDecodePacketUnsigned(t *testing.T) {
	b := packets(t)["udp4"]
	c := append([]byte(nil), b...)
	c[len(c)-frame.SignatureLen] = 0 // magic gone
	if _, ok, corrupt := DecodePacket(c); ok || corrupt {
		t.Errorf("unsigned frame: ok=%v corrupt=%v", ok, corrupt)
	}
	for _, short := range [][]byte{nil, {1, 2, 3}, make([]byte, 13)} {
		if _, ok, corrupt := DecodePacket(short); ok || corrupt {
			t.Errorf("short frame %d bytes: ok=%v corrupt=%v", len(short), ok, corrupt)
		}
	}
}

func FuzzDecodePacket(f *testing.F) {
	t := &testing.T{}
	for _, b := range packets(t) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		DecodePacket(b) // must never panic
	})
}

func BenchmarkDecodePacket64(b *testing.B) {
	p := packets(&testing.T{})["udp4"]
	b.ReportAllocs()
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		DecodePacket(p)
	}
}
