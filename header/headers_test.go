package header

import (
	"bytes"
	"net"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// TestAccessorsAgainstGopacket serializes headers with gopacket and reads
// them back through the views, then writes them with the views and has
// gopacket decode the result.
func TestAccessorsAgainstGopacket(t *testing.T) {
	src4, dst4 := net.IP{198, 18, 0, 1}, net.IP{198, 19, 0, 1}
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeDot1Q}
	vlan := &layers.Dot1Q{Priority: 5, DropEligible: true, VLANIdentifier: 100, Type: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TOS: 46<<2 | 1, Id: 77, Flags: layers.IPv4DontFragment, TTL: 63, Protocol: layers.IPProtocolTCP, SrcIP: src4, DstIP: dst4}
	tcp := &layers.TCP{SrcPort: 1024, DstPort: 80, Seq: 123456789, Ack: 987654321, DataOffset: 5, SYN: true, ACK: true, Window: 4096, Urgent: 3}
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	b := serialize(t, eth, vlan, ip, tcp, gopacket.Payload("abcd"))

	e := Ethernet(b)
	if !bytes.Equal(e.Src(), eth.SrcMAC) || !bytes.Equal(e.Dst(), eth.DstMAC) || e.Type() != EtherTypeVLAN {
		t.Fatalf("ethernet %x", b[:14])
	}
	v := VLAN(b[EthernetLen:])
	if v.ID() != 100 || v.PCP() != 5 || !v.DEI() || v.Type() != EtherTypeIPv4 {
		t.Fatalf("vlan %x", v[:4])
	}
	h := IPv4(b[EthernetLen+VLANLen:])
	if h.IHL() != 20 || h.DSCP() != 46 || h.ECN() != 1 || h.ID() != 77 || !h.DontFragment() || h.TTL() != 63 ||
		h.Protocol() != ProtoTCP || !bytes.Equal(h.Src(), src4) || !bytes.Equal(h.Dst(), dst4) || int(h.TotalLength()) != len(h) {
		t.Fatalf("ipv4 %x", h[:20])
	}
	if h.CalculateChecksum() != h.Checksum() {
		t.Fatal("ipv4 checksum")
	}
	tc := TCP(h[20:])
	if tc.SrcPort() != 1024 || tc.DstPort() != 80 || tc.Seq() != 123456789 || tc.Ack() != 987654321 || tc.DataOffset() != 20 ||
		tc.Flags() != TCPSyn|TCPAck || tc.Window() != 4096 || tc.Urgent() != 3 {
		t.Fatalf("tcp %x", tc[:20])
	}
	if tc.CalculateChecksum(h.PseudoSum(len(tc))) != tc.Checksum() {
		t.Fatal("tcp checksum")
	}

	// Written with the views, decoded by gopacket.
	out := make([]byte, EthernetLen+IPv6Len+ICMPEchoLen+4)
	e = Ethernet(out)
	e.SetSrc([]byte{2, 0, 0, 0, 0, 9})
	e.SetDst([]byte{2, 0, 0, 0, 0, 8})
	e.SetType(EtherTypeIPv6)
	h6 := IPv6(out[EthernetLen:])
	h6.SetVersionClassFlow(46<<2, 0xabcde)
	h6.SetPayloadLength(ICMPEchoLen + 4)
	h6.SetNextHeader(ProtoICMPv6)
	h6.SetHopLimit(9)
	h6.SetSrc(net.ParseIP("2001:2::1"))
	h6.SetDst(net.ParseIP("2001:2::2"))
	ic := ICMP(h6[IPv6Len:])
	ic.SetTypeCode(ICMPv6EchoRequest, 0)
	ic.SetIdent(7)
	ic.SetSeq(8)
	copy(ic[8:], "wxyz")
	ic.SetChecksum(ic.CalculateChecksum(h6.PseudoSum(ProtoICMPv6, len(ic))))
	p := gopacket.NewPacket(out, layers.LayerTypeEthernet, gopacket.Default)
	g6, _ := p.Layer(layers.LayerTypeIPv6).(*layers.IPv6)
	echo, _ := p.Layer(layers.LayerTypeICMPv6Echo).(*layers.ICMPv6Echo)
	if g6 == nil || echo == nil || g6.TrafficClass != 46<<2 || g6.FlowLabel != 0xabcde || g6.HopLimit != 9 || echo.Identifier != 7 || echo.SeqNumber != 8 {
		t.Fatalf("gopacket decoded %v", p)
	}
	if h6.TrafficClass() != 46<<2 || h6.FlowLabel() != 0xabcde || h6.PayloadLength() != 12 || h6.NextHeader() != ProtoICMPv6 || h6.HopLimit() != 9 {
		t.Fatal("ipv6 accessors")
	}
	// Re-serialize the ICMPv6 layer with gopacket's checksum and compare.
	g := p.Layer(layers.LayerTypeICMPv6).(*layers.ICMPv6)
	if err := g.SetNetworkLayerForChecksum(g6); err != nil {
		t.Fatal(err)
	}
	re := serialize(t, g, echo, gopacket.Payload("wxyz"))
	if ICMP(re).Checksum() != ic.Checksum() {
		t.Fatalf("icmpv6 checksum %#04x, gopacket %#04x", ic.Checksum(), ICMP(re).Checksum())
	}

	// ARP.
	a := make(ARP, ARPLen)
	a.Init()
	a.SetOp(ARPReply)
	a.SetSHA([]byte{2, 0, 0, 0, 0, 1})
	a.SetSPA(src4)
	a.SetTHA([]byte{2, 0, 0, 0, 0, 2})
	a.SetTPA(dst4)
	var ga layers.ARP
	if err := ga.DecodeFromBytes(a, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if ga.Operation != ARPReply || !bytes.Equal(ga.SourceProtAddress, src4) || !bytes.Equal(ga.DstHwAddress, []byte{2, 0, 0, 0, 0, 2}) || a.Op() != ARPReply ||
		!bytes.Equal(a.SHA(), []byte{2, 0, 0, 0, 0, 1}) || !bytes.Equal(a.TPA(), dst4) || !bytes.Equal(a.SPA(), src4) || !bytes.Equal(a.THA(), ga.DstHwAddress) {
		t.Fatalf("arp %+v", ga)
	}

	// UDP: a checksum that computes to 0 goes out as 0xffff.
	u := make(UDP, 8)
	u.SetChecksum(0)
	if u.Checksum() != 0xffff {
		t.Fatal("udp zero checksum")
	}
}
