package header

import (
	"encoding/binary"
	"net"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// naiveChecksum is RFC 1071 written the slow, obvious way.
func naiveChecksum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s>>16 != 0 {
		s = s>>16 + s&0xffff
	}
	return ^uint16(s)
}

func serialize(t testing.TB, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{ComputeChecksums: true, FixLengths: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestChecksumKnown(t *testing.T) {
	// RFC 1071 §3 example: 00 01 f2 03 f4 f5 f6 f7 sums to 0xddf2.
	b := []byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}
	if got := Fold(Sum(b, 0)); got != 0xddf2 {
		t.Fatalf("sum = %#04x, want 0xddf2", got)
	}
	if got := Checksum(b, 0); got != ^uint16(0xddf2) {
		t.Fatalf("checksum = %#04x", got)
	}
}

func TestSumCarryChain(t *testing.T) {
	b := make([]byte, 64)
	for i := range b {
		b[i] = 0xff
	}
	for n := 0; n <= len(b); n++ {
		if got, want := Checksum(b[:n], 0), naiveChecksum(b[:n]); got != want {
			t.Fatalf("n=%d: %#04x want %#04x", n, got, want)
		}
	}
}

// FuzzChecksum compares Checksum with a naive RFC 1071 sum and with the
// ICMPv4 checksum gopacket computes over the same bytes.
func FuzzChecksum(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0xff})
	f.Add([]byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7})
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := Checksum(data, 0), naiveChecksum(data); got != want {
			t.Fatalf("Checksum = %#04x, naive %#04x", got, want)
		}
		pkt := serialize(t, &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(8, 0), Id: 7, Seq: 9}, gopacket.Payload(data))
		if got, want := ICMP(pkt).CalculateChecksum(0), ICMP(pkt).Checksum(); got != want {
			t.Fatalf("ICMP checksum = %#04x, gopacket %#04x", got, want)
		}
	})
}

// FuzzUDPPseudo checks UDP checksums with IPv4 and IPv6 pseudo-headers
// against gopacket.
func FuzzUDPPseudo(f *testing.F) {
	f.Add([]byte{198, 18, 0, 1}, []byte{198, 19, 0, 1}, uint16(1024), uint16(9), []byte("payload"))
	f.Add([]byte{255, 255, 255, 255}, []byte{0, 0, 0, 0}, uint16(65535), uint16(0), []byte{0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, a, b []byte, sp, dp uint16, payload []byte) {
		if len(a) < 16 || len(b) < 16 {
			a = append(append([]byte{}, a...), make([]byte, 16)...)
			b = append(append([]byte{}, b...), make([]byte, 16)...)
		}
		// IPv4
		ip4 := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: net.IP(a[:4]), DstIP: net.IP(b[:4])}
		udp := &layers.UDP{SrcPort: layers.UDPPort(sp), DstPort: layers.UDPPort(dp)}
		if err := udp.SetNetworkLayerForChecksum(ip4); err != nil {
			t.Fatal(err)
		}
		pkt := serialize(t, ip4, udp, gopacket.Payload(payload))
		h := IPv4(pkt)
		if got := h.CalculateChecksum(); got != h.Checksum() {
			t.Fatalf("IPv4 header checksum %#04x, gopacket %#04x", got, h.Checksum())
		}
		u := UDP(pkt[IPv4MinLen:])
		if got := u.CalculateChecksum(h.PseudoSum(len(u))); got != u.Checksum() {
			t.Fatalf("UDP/IPv4 checksum %#04x, gopacket %#04x", got, u.Checksum())
		}
		// IPv6
		ip6 := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolUDP, SrcIP: net.IP(a[:16]), DstIP: net.IP(b[:16])}
		if err := udp.SetNetworkLayerForChecksum(ip6); err != nil {
			t.Fatal(err)
		}
		pkt = serialize(t, ip6, udp, gopacket.Payload(payload))
		h6 := IPv6(pkt)
		u = UDP(pkt[IPv6Len:])
		if got := u.CalculateChecksum(h6.PseudoSum(ProtoUDP, len(u))); got != u.Checksum() {
			t.Fatalf("UDP/IPv6 checksum %#04x, gopacket %#04x", got, u.Checksum())
		}
	})
}

// FuzzIncremental patches one 16-bit word of an IPv4 header (any of them
// except the checksum) and checks that the RFC 1624 update equals the full
// recomputation and gopacket's checksum of the patched header.
func FuzzIncremental(f *testing.F) {
	f.Add([]byte{198, 18, 0, 1}, []byte{198, 19, 0, 1}, uint8(64), uint8(6), uint16(0xc613))
	f.Add([]byte{0, 0, 0, 0}, []byte{255, 255, 255, 255}, uint8(1), uint8(0), uint16(0))
	f.Add([]byte{1, 2, 3, 4}, []byte{5, 6, 7, 8}, uint8(255), uint8(9), uint16(0xffff))
	f.Fuzz(func(t *testing.T, src, dst []byte, ttl, word uint8, v uint16) {
		if len(src) < 4 || len(dst) < 4 {
			return
		}
		ip := &layers.IPv4{Version: 4, IHL: 5, TTL: ttl, Protocol: layers.IPProtocolUDP, SrcIP: net.IP(src[:4]), DstIP: net.IP(dst[:4])}
		pkt := serialize(t, ip, gopacket.Payload([]byte{1, 2, 3, 4}))
		h := IPv4(pkt)
		w := int(word%10) * 2
		if w == 0 || w == 10 || w == 2 { // version/IHL, checksum, total length (gopacket recomputes it)
			w = 8
		}
		old := binary.BigEndian.Uint16(h[w:])
		c := Update(h.Checksum(), old, v)
		binary.BigEndian.PutUint16(h[w:], v)
		if full := h.CalculateChecksum(); c != full && !(c == 0xffff && full == 0) && !(c == 0 && full == 0xffff) {
			t.Fatalf("incremental %#04x, full %#04x", c, full)
		}
		// gopacket on the patched header.
		var dec layers.IPv4
		if err := dec.DecodeFromBytes(h, gopacket.NilDecodeFeedback); err == nil && dec.IHL == 5 {
			dec.Checksum = 0
			re := serialize(t, &dec, gopacket.Payload(dec.Payload))
			if gc := IPv4(re).Checksum(); gc != c && !(c == 0xffff && gc == 0) && !(c == 0 && gc == 0xffff) {
				t.Fatalf("incremental %#04x, gopacket %#04x", c, gc)
			}
		}
		// UpdateSum over a span gives the same as word-by-word Update.
		s := UpdateSum(h.Checksum(), uint64(old), uint64(v))
		if s != c {
			t.Fatalf("UpdateSum %#04x, Update %#04x", s, c)
		}
	})
}

func TestSwap16OddOffset(t *testing.T) {
	data := []byte{0x12, 0x34, 0x56, 0x78, 0x9a}
	whole := Fold(Sum(data, 0))
	even := Fold(Sum(data[:1], 0))
	odd := Fold(Sum(data[1:], 0))
	if got := Fold(uint64(even) + uint64(Swap16(odd))); got != whole {
		t.Fatalf("odd split %#04x, whole %#04x", got, whole)
	}
}

// foldRef is the plain end-around fold Fold must equal: the 32-bit
// halves, then three 16-bit steps.
func foldRef(s uint64) uint16 {
	t := (s >> 32) + (s & 0xffffffff)
	t = (t >> 16) + (t & 0xffff)
	t = (t >> 16) + (t & 0xffff)
	t = (t >> 16) + (t & 0xffff)
	return uint16(t)
}

// TestFoldMatchesReference checks Fold against foldRef on the edges of
// every step (carries out of 16 and 32 bits, 0, 0xffff and its multiples)
// and on pseudo-random sums of every magnitude.
func TestFoldMatchesReference(t *testing.T) {
	edges := []uint64{0, 1, 0xfffe, 0xffff, 0x10000, 0x1fffe, 0x1ffff, 0xfffeffff, 0xffff0000, 0xffffffff, 1 << 32, 1<<32 + 0xffff,
		1<<33 - 1, 0xffff_ffff_0000_0000, 0xffff_fffe_ffff_0001, 1<<63 - 1, 1 << 63, ^uint64(0), ^uint64(0) - 1, 0xffff * 0x10001}
	for _, s := range edges {
		if got, want := Fold(s), foldRef(s); got != want {
			t.Errorf("Fold(%#x) = %#x, want %#x", s, got, want)
		}
	}
	x := uint64(0x9e3779b97f4a7c15)
	for i := range 1 << 20 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		s := x >> (uint(i) % 64) // every magnitude
		if got, want := Fold(s), foldRef(s); got != want {
			t.Fatalf("Fold(%#x) = %#x, want %#x", s, got, want)
		}
	}
}
