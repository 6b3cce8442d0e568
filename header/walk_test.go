package header

import (
	"bytes"
	"testing"
)

func TestSkipVLANs(t *testing.T) {
	frame := func(types ...uint16) []byte {
		b := make([]byte, EthernetLen+VLANLen*(len(types)-1)+IPv4MinLen)
		at := ethType
		for _, et := range types {
			b[at], b[at+1] = byte(et>>8), byte(et)
			at += VLANLen
		}
		return b
	}
	for _, c := range []struct {
		name   string
		b      []byte
		et     uint16
		off    int
		ok     bool
		tagged bool
	}{
		{"untagged", frame(EtherTypeIPv4), EtherTypeIPv4, EthernetLen, true, false},
		{"802.1Q", frame(EtherTypeVLAN, EtherTypeIPv6), EtherTypeIPv6, EthernetLen + VLANLen, true, true},
		{"QinQ", frame(EtherTypeQinQ, EtherTypeVLAN, EtherTypeIPv4), EtherTypeIPv4, EthernetLen + 2*VLANLen, true, true},
		{"0x9100 walked, not tagged", frame(EtherTypeQinQ9100, EtherTypeARP), EtherTypeARP, EthernetLen + VLANLen, true, false},
		{"four tags", frame(EtherTypeVLAN, EtherTypeVLAN, EtherTypeVLAN, EtherTypeVLAN, EtherTypeIPv4), EtherTypeIPv4, EthernetLen + 4*VLANLen, true, true},
		{"five tags", frame(EtherTypeVLAN, EtherTypeVLAN, EtherTypeVLAN, EtherTypeVLAN, EtherTypeVLAN, EtherTypeIPv4), 0, 0, false, true},
		{"truncated tag", frame(EtherTypeVLAN, EtherTypeIPv4)[:EthernetLen+VLANLen-1], 0, 0, false, true},
		{"short", make([]byte, EthernetLen-1), 0, 0, false, false},
	} {
		et, off, ok := SkipVLANs(c.b)
		if et != c.et || off != c.off || ok != c.ok {
			t.Errorf("%s: SkipVLANs = %#04x, %d, %v; want %#04x, %d, %v", c.name, et, off, ok, c.et, c.off, c.ok)
		}
		if got := VLANTagged(c.b); got != c.tagged {
			t.Errorf("%s: VLANTagged = %v", c.name, got)
		}
	}
}

func TestInsertVLAN(t *testing.T) {
	b := make([]byte, VLANLen+EthernetLen+2)
	eth := Ethernet(b[VLANLen:])
	eth.SetDst([]byte{2, 0, 0, 0, 0, 2})
	eth.SetSrc([]byte{2, 0, 0, 0, 0, 1})
	eth.SetType(EtherTypeIPv4)
	start := InsertVLAN(b, VLANLen, EtherTypeQinQ, 5<<13|100)
	tagged := Ethernet(b[start:])
	v := VLAN(b[start+EthernetLen:])
	if start != 0 || !bytes.Equal(tagged.Dst(), []byte{2, 0, 0, 0, 0, 2}) || !bytes.Equal(tagged.Src(), []byte{2, 0, 0, 0, 0, 1}) ||
		tagged.Type() != EtherTypeQinQ || v.PCP() != 5 || v.ID() != 100 || v.Type() != EtherTypeIPv4 {
		t.Errorf("InsertVLAN: start %d, frame %x", start, b)
	}
}

func TestSkipIPv6Extensions(t *testing.T) {
	// hop-by-hop (8 bytes), routing (16 bytes), then a fragment header.
	rest := make([]byte, 8+16+IPv6FragmentLen)
	rest[0], rest[1] = ProtoIPv6Routing, 0
	rest[8], rest[9] = ProtoIPv6Fragment, 1
	frag := IPv6Fragment(rest[24:])
	frag[0] = ProtoUDP
	frag[2], frag[3] = 0x00, 0x19 // offset 3 (× 8 bytes), M set
	next, after, ok := SkipIPv6Extensions(ProtoIPv6HopByHop, rest)
	if !ok || next != ProtoIPv6Fragment || len(after) != IPv6FragmentLen {
		t.Fatalf("SkipIPv6Extensions = %d, %d bytes, %v", next, len(after), ok)
	}
	if f := IPv6Fragment(after); f.FragmentOffset() != 3 || !f.MoreFragments() {
		t.Errorf("fragment offset %d, more %v", f.FragmentOffset(), f.MoreFragments())
	}
	if _, _, ok := SkipIPv6Extensions(ProtoIPv6HopByHop, rest[:12]); ok {
		t.Error("a truncated routing header: ok")
	}
	if next, after, ok := SkipIPv6Extensions(ProtoTCP, rest); !ok || next != ProtoTCP || len(after) != len(rest) {
		t.Error("no extension headers: not returned as they are")
	}
}

func TestIPv4Fragment(t *testing.T) {
	h := make(IPv4, IPv4MinLen)
	h.Init()
	if IPVersion(h) != 4 || h.MoreFragments() || h.FragmentOffset() != 0 {
		t.Fatalf("a fresh header: version %d, more %v, offset %d", IPVersion(h), h.MoreFragments(), h.FragmentOffset())
	}
	h.SetDontFragment(true)
	h[ipv4FlagsFrag] |= 0x20 // MF
	h[ipv4FlagsFrag+1] = 0x10
	if !h.DontFragment() || !h.MoreFragments() || h.FragmentOffset() != 0x10 {
		t.Errorf("DF, MF, offset 16: got %v, %v, %d", h.DontFragment(), h.MoreFragments(), h.FragmentOffset())
	}
}
