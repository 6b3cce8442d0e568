package recv

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// fragments returns a fragmented datagram of each IP version, as wpg
// sends them (the signature in the last fragment), first fragments first.
func fragments(t *testing.T) (first4, last4, first6, last6 []byte) {
	eth4 := &layers.Ethernet{SrcMAC: srcMAC, DstMAC: dstMAC, EthernetType: layers.EthernetTypeIPv4}
	eth6 := &layers.Ethernet{SrcMAC: srcMAC, DstMAC: dstMAC, EthernetType: layers.EthernetTypeIPv6}
	ip4 := func(flags layers.IPv4Flag, off uint16) *layers.IPv4 {
		return &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: src4, DstIP: dst4, Id: 7, Flags: flags, FragOffset: off}
	}
	frag6 := func(off uint16, more bool, rest []byte) gopacket.Payload {
		h := make([]byte, 8, 8+len(rest))
		h[0] = byte(layers.IPProtocolUDP)
		v := off << 3
		if more {
			v |= 1
		}
		binary.BigEndian.PutUint16(h[2:], v)
		binary.BigEndian.PutUint32(h[4:], 0x10000)
		return append(h, rest...)
	}
	ip6 := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolIPv6Fragment, SrcIP: src6, DstIP: dst6}
	first4 = build(t, eth4, ip4(layers.IPv4MoreFragments, 0), gopacket.Payload(make([]byte, 1480)))
	last4 = build(t, eth4, ip4(0, 185), signedPayload(206, 10))
	first6 = build(t, eth6, ip6, frag6(0, true, make([]byte, 1232)))
	last6 = build(t, eth6, ip6, frag6(154, false, signedPayload(500, 11)))
	return
}

// wpg send counts a fragmented stream's frames and its datagrams; wpg
// recv counted the signed last fragments as "frames" and the others
// "without signature", so the two reports never matched. A network
// receiver counts the datagrams, and says which of the frames without a
// signature are their other fragments.
func TestRunCountsFragmentedDatagrams(t *testing.T) {
	first4, last4, first6, last6 := fragments(t)
	for _, c := range []struct {
		name                string
		frames              [][]byte
		datagrams, unsigned uint64 // Datagrams and UnsignedFragments
		row                 string
	}{
		{"fragments only", [][]byte{first4, last4, first6, last6}, 2, 2, "datagrams 2 (802 B of signed last fragments"},
		{"fragments and whole frames", [][]byte{first4, last4, packets(t)["udp4"], first6, last6, []byte("not wpg")}, 2, 2, "2 of them IP datagrams"},
		{"no fragments", [][]byte{packets(t)["udp4"]}, 0, 0, "frames 1 (64 B)"},
	} {
		r, err := Run(context.Background(), &sliceReceiver{frames: c.frames, eof: true}, DecodePacket, Options{IPFragments: true})
		if err != nil || r.Corrupted != 0 || r.Datagrams != c.datagrams || r.UnsignedFragments != c.unsigned {
			t.Errorf("%s: err %v, %d frames, %d datagrams, %d unsigned of which %d fragments, %d corrupted; want %d datagrams and %d other fragments",
				c.name, err, r.Frames, r.Datagrams, r.Unsigned, r.UnsignedFragments, r.Corrupted, c.datagrams, c.unsigned)
		}
		var b strings.Builder
		r.WriteTable(&b)
		if !strings.Contains(strings.Join(strings.Fields(b.String()), " "), c.row) {
			t.Errorf("%s: table lacks %q:\n%s", c.name, c.row, b.String())
		}
		if c.unsigned > 0 && !strings.Contains(b.String(), "2 of them the datagrams' other IP fragments") {
			t.Errorf("%s: table does not say which unsigned frames are fragments:\n%s", c.name, b.String())
		}
	}
	// A receiver of payload frames counts no fragments.
	r, _ := Run(context.Background(), &sliceReceiver{frames: [][]byte{first4, last4}, eof: true}, DecodePacket, Options{})
	if r.Datagrams != 0 || r.UnsignedFragments != 0 {
		t.Errorf("without IPFragments: %+v", r)
	}
}

func TestIPFragment(t *testing.T) {
	first4, last4, first6, last6 := fragments(t)
	for name, c := range map[string]struct {
		b              []byte
		fragment, last bool
	}{
		"first4": {first4, true, false}, "last4": {last4, true, true},
		"first6": {first6, true, false}, "last6": {last6, true, true},
		"udp4": {packets(t)["udp4"], false, false}, "udp6": {packets(t)["udp6"], false, false},
		"arp": {packets(t)["arp"], false, false}, "short": {last4[:20], false, false},
	} {
		if f, l := ipFragment(c.b); f != c.fragment || l != c.last {
			t.Errorf("%s: fragment %v, last %v; want %v, %v", name, f, l, c.fragment, c.last)
		}
	}
}
