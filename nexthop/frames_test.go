package nexthop

import (
	"net"
	"net/netip"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

var (
	macA = net.HardwareAddr{2, 0, 0, 0, 0, 0xa}
	macR = net.HardwareAddr{2, 0, 0, 0, 0, 0xfe}
)

// decode checks a frame with gopacket (checksums included) and returns
// its layers.
func decode(t *testing.T, b []byte) gopacket.Packet {
	t.Helper()
	p := gopacket.NewPacket(b, layers.LayerTypeEthernet, gopacket.Default)
	if el := p.ErrorLayer(); el != nil {
		t.Fatalf("gopacket: %v", el.Error())
	}
	return p
}

func TestARPFrames(t *testing.T) {
	me, gw := netip.MustParseAddr("198.18.0.1"), netip.MustParseAddr("198.18.0.254")
	req, err := arpFrame(nil, 1, macA, me, nil, gw)
	if err != nil {
		t.Fatal(err)
	}
	a := decode(t, req).Layer(layers.LayerTypeARP).(*layers.ARP)
	if a.Operation != 1 || net.IP(a.DstProtAddress).String() != gw.String() || net.HardwareAddr(a.SourceHwAddress).String() != macA.String() {
		t.Fatalf("request: %+v", a)
	}
	m, ok := parse(req)
	if !ok || m.kind != kindRequest || m.Sender != me || m.Target != gw || m.MAC.String() != macA.String() {
		t.Fatalf("parse(request) = %+v, %v", m, ok)
	}
	rep, err := arpFrame(nil, 2, macR, gw, macA, me)
	if err != nil {
		t.Fatal(err)
	}
	if e := decode(t, rep).Layer(layers.LayerTypeEthernet).(*layers.Ethernet); e.DstMAC.String() != macA.String() {
		t.Fatalf("reply to %s, want %s", e.DstMAC, macA)
	}
	m, ok = parse(rep)
	if !ok || m.kind != kindReply || m.Sender != gw || m.MAC.String() != macR.String() {
		t.Fatalf("parse(reply) = %+v, %v", m, ok)
	}
}

func TestNDFrames(t *testing.T) {
	me, gw := netip.MustParseAddr("2001:2:0:a::1"), netip.MustParseAddr("2001:2:0:a::fe")
	ns, err := solicit(nil, macA, me, gw)
	if err != nil {
		t.Fatal(err)
	}
	p := decode(t, ns)
	ip := p.Layer(layers.LayerTypeIPv6).(*layers.IPv6)
	if ip.HopLimit != 255 || ip.DstIP.String() != "ff02::1:ff00:fe" || p.Layer(layers.LayerTypeEthernet).(*layers.Ethernet).DstMAC.String() != "33:33:ff:00:00:fe" {
		t.Fatalf("solicitation: %v", p)
	}
	icmp := p.Layer(layers.LayerTypeICMPv6).(*layers.ICMPv6)
	if err := icmp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	if sol, ok := p.Layer(layers.LayerTypeICMPv6NeighborSolicitation).(*layers.ICMPv6NeighborSolicitation); !ok || sol.TargetAddress.String() != gw.String() {
		t.Fatalf("solicitation target: %v", p)
	}
	if !checksumOK(t, ns) {
		t.Fatal("solicitation: bad ICMPv6 checksum")
	}
	q, ok := parse(ns)
	if !ok || q.kind != kindRequest || q.Target != gw || q.Sender != me || q.MAC.String() != macA.String() {
		t.Fatalf("parse(solicitation) = %+v, %v", q, ok)
	}
	na, err := advertise(nil, macR, gw, q)
	if err != nil {
		t.Fatal(err)
	}
	p = decode(t, na)
	adv, ok := p.Layer(layers.LayerTypeICMPv6NeighborAdvertisement).(*layers.ICMPv6NeighborAdvertisement)
	if !ok || !adv.Solicited() || !adv.Override() || adv.TargetAddress.String() != gw.String() ||
		p.Layer(layers.LayerTypeIPv6).(*layers.IPv6).DstIP.String() != me.String() || !checksumOK(t, na) {
		t.Fatalf("advertisement: %v", p)
	}
	m, ok := parse(na)
	if !ok || m.kind != kindReply || m.Target != gw || m.MAC.String() != macR.String() {
		t.Fatalf("parse(advertisement) = %+v, %v", m, ok)
	}
	// A duplicate address probe (from ::) is answered to all nodes.
	probe := q
	probe.Sender = netip.IPv6Unspecified()
	na, err = advertise(nil, macR, gw, probe)
	if err != nil {
		t.Fatal(err)
	}
	if d := decode(t, na).Layer(layers.LayerTypeIPv6).(*layers.IPv6).DstIP.String(); d != "ff02::1" {
		t.Fatalf("answer to a DAD probe went to %s", d)
	}
}

// checksumOK verifies the ICMPv6 checksum of an Ethernet/IPv6 frame.
func checksumOK(t *testing.T, b []byte) bool {
	t.Helper()
	ip := b[14:]
	plen := int(ip[4])<<8 | int(ip[5])
	var sum uint32
	add := func(x []byte) {
		for i := 0; i+1 < len(x); i += 2 {
			sum += uint32(x[i])<<8 | uint32(x[i+1])
		}
		if len(x)%2 == 1 {
			sum += uint32(x[len(x)-1]) << 8
		}
	}
	add(ip[8:40])
	sum += uint32(plen) + 58
	add(ip[40 : 40+plen])
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return sum == 0xffff
}

func TestParseIgnores(t *testing.T) {
	for _, b := range [][]byte{nil, make([]byte, 14), append(make([]byte, 12), 0x08, 0x00, 0x45)} {
		if _, ok := parse(b); ok {
			t.Errorf("parse(% x) took it for a neighbour message", b)
		}
	}
}
