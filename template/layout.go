package template

import (
	"encoding/binary"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/header"
)

// Checksums a field is covered by.
const (
	covIP = 1 << iota // IPv4 header checksum
	covL4             // UDP/TCP/ICMP/ICMPv6 checksum
)

// slot is a field of a stream at a fixed frame offset. The value occupies
// bits mask of a big-endian slot of width bytes (2, 4, 6 or 8) starting at
// an even frame offset off, shifted left by shift; the other bits of the
// slot belong to neighbouring fields and are left alone.
type slot struct {
	name  string
	v     Value
	off   int
	width int
	shift uint
	mask  uint64
	cov   uint8
}

// layout is where a stream's headers are, and its fields.
type layout struct {
	st     *Stream
	id     uint16
	l3, l4 int // offsets; -1 when absent
	pay    int // first payload byte
	ipCsum int // IPv4 header checksum offset, -1 if none
	l4Csum int // L4 checksum offset, -1 if none
	udp    bool
	slots  []slot
}

func newLayout(st *Stream, id uint16) *layout {
	L := &layout{st: st, id: id, l3: -1, l4: -1, ipCsum: -1, l4Csum: -1}
	add := func(name string, v Value, off, width int, shift uint, bits int, cov uint8) {
		L.slots = append(L.slots, slot{name: name, v: v, off: off, width: width, shift: shift, mask: (1<<uint(bits) - 1) << shift, cov: cov})
	}
	add("ethernet.dst", st.Ethernet.Dst, 0, 6, 0, 48, 0)
	add("ethernet.src", st.Ethernet.Src, 6, 6, 0, 48, 0)
	off := header.EthernetLen
	for i, v := range st.VLANs {
		add("vlan["+string(rune('0'+i))+"].id", v.ID, off, 2, 0, 12, 0)
		off += header.VLANLen
	}
	// L4 pseudo-header coverage of the IP addresses.
	var pseudo uint8
	if st.UDP != nil || st.TCP != nil || (st.ICMP != nil && st.IPv6 != nil) {
		pseudo = covL4
	}
	switch {
	case st.IPv4 != nil:
		L.l3 = off
		h := st.IPv4
		add("ipv4.dscp", h.DSCP, off, 2, 2, 6, covIP)
		add("ipv4.id", h.ID, off+4, 2, 0, 16, covIP)
		add("ipv4.ttl", h.TTL, off+8, 2, 8, 8, covIP)
		add("ipv4.src", h.Src, off+12, 4, 0, 32, covIP|pseudo)
		add("ipv4.dst", h.Dst, off+16, 4, 0, 32, covIP|pseudo)
		L.ipCsum = off + 10
		off += header.IPv4MinLen
	case st.IPv6 != nil:
		L.l3 = off
		h := st.IPv6
		add("ipv6.dscp", h.DSCP, off, 4, 22, 6, 0)
		add("ipv6.flow_label", h.FlowLabel, off, 4, 0, 20, 0)
		add("ipv6.hop_limit", h.HopLimit, off+6, 2, 0, 8, 0)
		add("ipv6.src", h.Src.Lo, off+16, 8, 0, 64, pseudo)
		add("ipv6.dst", h.Dst.Lo, off+32, 8, 0, 64, pseudo)
		off += header.IPv6Len
	case st.ARP != nil:
		L.l3 = off
		a := st.ARP
		add("arp.sha", a.SHA, off+8, 6, 0, 48, 0)
		add("arp.spa", a.SPA, off+14, 4, 0, 32, 0)
		add("arp.tha", a.THA, off+18, 6, 0, 48, 0)
		add("arp.tpa", a.TPA, off+24, 4, 0, 32, 0)
		off += header.ARPLen
	}
	switch {
	case st.UDP != nil:
		L.l4 = off
		add("udp.src", st.UDP.Src, off, 2, 0, 16, covL4)
		add("udp.dst", st.UDP.Dst, off+2, 2, 0, 16, covL4)
		L.l4Csum = off + 6
		L.udp = true
		off += header.UDPLen
	case st.TCP != nil:
		L.l4 = off
		add("tcp.src", st.TCP.Src, off, 2, 0, 16, covL4)
		add("tcp.dst", st.TCP.Dst, off+2, 2, 0, 16, covL4)
		add("tcp.seq", st.TCP.Seq, off+4, 4, 0, 32, covL4)
		add("tcp.ack", st.TCP.Ack, off+8, 4, 0, 32, covL4)
		L.l4Csum = off + 16
		off += header.TCPMinLen
	case st.ICMP != nil:
		L.l4 = off
		add("icmp.id", st.ICMP.ID, off+4, 2, 0, 16, covL4)
		add("icmp.seq", st.ICMP.Seq, off+6, 2, 0, 16, covL4)
		L.l4Csum = off + 2
		off += header.ICMPEchoLen
	}
	L.pay = off
	for _, f := range st.Payload.Fields {
		po := off + f.Offset
		start := po &^ 1
		end := (po + f.Width + 1) &^ 1
		var cov uint8
		if L.l4 >= 0 {
			cov = covL4
		}
		add("payload", f.Value, start, end-start, uint(8*(end-po-f.Width)), 8*f.Width, cov)
	}
	return L
}

// loadSlot reads a slot of width bytes at off.
func loadSlot(b []byte, off, width int) uint64 {
	switch width {
	case 2:
		return uint64(binary.BigEndian.Uint16(b[off:]))
	case 4:
		return uint64(binary.BigEndian.Uint32(b[off:]))
	case 6:
		return uint64(binary.BigEndian.Uint16(b[off:]))<<32 | uint64(binary.BigEndian.Uint32(b[off+2:]))
	default:
		return binary.BigEndian.Uint64(b[off:])
	}
}

// storeSlot writes a slot of width bytes at off.
func storeSlot(b []byte, off, width int, v uint64) {
	switch width {
	case 2:
		binary.BigEndian.PutUint16(b[off:], uint16(v))
	case 4:
		binary.BigEndian.PutUint32(b[off:], uint32(v))
	case 6:
		binary.BigEndian.PutUint16(b[off:], uint16(v>>32))
		binary.BigEndian.PutUint32(b[off+2:], uint32(v))
	default:
		binary.BigEndian.PutUint64(b[off:], v)
	}
}

// write renders the frame of packet k at size n into b[:n] with every
// header, field, payload byte and signature (sequence seq, time 0), and
// the checksums, computed in full. With zero set, varying fields are
// written as 0 and checksums are left 0: the base image the streaming
// patcher adds to.
func (L *layout) write(b []byte, n int, k, seq uint64, zero bool) {
	st := L.st
	b = b[:n]
	// Payload first (headers overwrite nothing of it).
	pat := st.Payload.Pattern
	if len(pat) == 0 {
		clear(b[L.pay:])
	} else {
		// Doubling copies: O(log n) calls whatever the pattern length.
		p := b[L.pay:]
		done := copy(p, pat)
		for done < len(p) {
			done += copy(p[done:], p[:done])
		}
	}
	off := header.EthernetLen
	next := func(t uint16) {
		binary.BigEndian.PutUint16(b[off-2:], t)
	}
	for _, v := range st.VLANs {
		next(v.TPID)
		header.VLAN(b[off:]).SetTCI(v.PCP, v.DEI, 0)
		off += header.VLANLen
	}
	var proto uint8
	switch {
	case st.UDP != nil:
		proto = header.ProtoUDP
	case st.TCP != nil:
		proto = header.ProtoTCP
	case st.ICMP != nil && st.IPv6 != nil:
		proto = header.ProtoICMPv6
	case st.ICMP != nil:
		proto = header.ProtoICMPv4
	}
	switch {
	case st.IPv4 != nil:
		next(header.EtherTypeIPv4)
		h := header.IPv4(b[off:])
		clear(h[:header.IPv4MinLen])
		h.Init()
		h.SetTOS(0, st.IPv4.ECN)
		h.SetTotalLength(uint16(n - off))
		h.SetDontFragment(st.IPv4.DF)
		if proto == 0 {
			proto = st.IPv4.Protocol
			if proto == 0 {
				proto = 253
			}
		}
		h.SetProtocol(proto)
		off += header.IPv4MinLen
	case st.IPv6 != nil:
		next(header.EtherTypeIPv6)
		h := header.IPv6(b[off:])
		clear(h[:header.IPv6Len])
		h.SetVersionClassFlow(st.IPv6.ECN, 0)
		h.SetPayloadLength(uint16(n - off - header.IPv6Len))
		if proto == 0 {
			proto = st.IPv6.NextHeader
			if proto == 0 {
				proto = 253
			}
		}
		h.SetNextHeader(proto)
		binary.BigEndian.PutUint64(h[8:], st.IPv6.Src.Hi)
		binary.BigEndian.PutUint64(h[24:], st.IPv6.Dst.Hi)
		off += header.IPv6Len
	case st.ARP != nil:
		next(header.EtherTypeARP)
		a := header.ARP(b[off:])
		a.Init()
		a.SetOp(st.ARP.Op)
		off += header.ARPLen
	default:
		t := st.Ethernet.Type
		if t == 0 {
			t = header.EtherTypeLocal
		}
		next(t)
	}
	switch {
	case st.UDP != nil:
		u := header.UDP(b[off:])
		u.SetLength(uint16(n - off))
		binary.BigEndian.PutUint16(u[6:], 0)
	case st.TCP != nil:
		t := header.TCP(b[off:])
		clear(t[:header.TCPMinLen])
		t.SetDataOffset(header.TCPMinLen)
		t.SetFlags(st.TCP.Flags)
		t.SetWindow(st.TCP.Window)
	case st.ICMP != nil:
		c := header.ICMP(b[off:])
		var typ uint8
		switch {
		case st.IPv6 != nil && st.ICMP.Reply:
			typ = header.ICMPv6EchoReply
		case st.IPv6 != nil:
			typ = header.ICMPv6EchoRequest
		case st.ICMP.Reply:
			typ = header.ICMPv4EchoReply
		default:
			typ = header.ICMPv4EchoRequest
		}
		c.SetTypeCode(typ, 0)
		binary.BigEndian.PutUint16(c[2:], 0)
	}
	// Every field, fixed or varying, through its slot.
	for i := range L.slots {
		s := &L.slots[i]
		var v uint64
		if !zero || s.v.Kind == Fixed {
			v = s.v.At(k)
		}
		old := loadSlot(b, s.off, s.width)
		storeSlot(b, s.off, s.width, old&^s.mask|(v<<s.shift)&s.mask)
	}
	if st.Signature {
		frame.PutSignature(b, frame.Signature{Stream: L.id, Seq: seq})
	}
	if !zero {
		L.checksums(b)
	}
}

// checksums computes every checksum of frame b in full.
func (L *layout) checksums(b []byte) {
	if L.ipCsum >= 0 {
		h := header.IPv4(b[L.l3:])
		h.SetChecksum(0)
		h.SetChecksum(h.CalculateChecksum())
	}
	if L.l4Csum < 0 {
		return
	}
	binary.BigEndian.PutUint16(b[L.l4Csum:], 0)
	seg := b[L.l4:]
	var pseudo uint64
	switch {
	case L.st.IPv4 != nil && L.st.ICMP != nil:
		pseudo = 0
	case L.st.IPv4 != nil:
		pseudo = header.IPv4(b[L.l3:]).PseudoSum(len(seg))
	default:
		h := header.IPv6(b[L.l3:])
		pseudo = h.PseudoSum(h.NextHeader(), len(seg))
	}
	c := header.Checksum(seg, pseudo)
	if L.udp && c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(b[L.l4Csum:], c)
}

// baseSums returns the one's-complement sums a streaming patcher starts
// from for a frame of size n: the frame with every varying field zeroed,
// signature sequence and time zero, checksum fields zero, plus for L4 the
// pseudo-header. scratch must hold n bytes.
func (L *layout) baseSums(scratch []byte, n int) (ip, l4 uint64) {
	L.write(scratch, n, 0, 0, true)
	b := scratch[:n]
	if L.ipCsum >= 0 {
		ip = header.Sum(b[L.l3:L.l3+header.IPv4MinLen], 0)
	}
	if L.l4Csum >= 0 {
		seg := b[L.l4:]
		switch {
		case L.st.IPv4 != nil && L.st.ICMP != nil:
		case L.st.IPv4 != nil:
			h := header.IPv4(b[L.l3:])
			// Addresses may be varying (zeroed here): add only the constant part.
			l4 = uint64(h.Protocol()) + uint64(len(seg)) + header.Sum(h[12:20], 0)
		default:
			h := header.IPv6(b[L.l3:])
			l4 = header.PseudoSumIPv6(h.Src(), h.Dst(), h.NextHeader(), len(seg))
		}
		l4 = header.Sum(seg, l4)
	}
	return ip, l4
}
