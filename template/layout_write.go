package template

import (
	"encoding/binary"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/header"
)

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
	for i := range L.hdrs {
		L.writeHeader(b, i)
	}
	for _, f := range L.lens {
		binary.BigEndian.PutUint16(b[f.off:], uint16(n-f.sub))
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

// writeHeader writes the constant bytes of header i (fields and lengths
// come after), its checksum field 0.
func (L *layout) writeHeader(b []byte, i int) {
	x := &L.hdrs[i]
	h := x.h
	at := b[x.off:]
	next, ok := L.nextType(i)
	switch x.kind {
	case hEth:
		binary.BigEndian.PutUint16(at[12:], nextOr(next, ok, h.Ethernet.Type, header.EtherTypeLocal))
	case hVLAN:
		v := h.VLANs[x.i]
		header.VLAN(at).SetTCI(v.PCP, v.DEI, 0)
		binary.BigEndian.PutUint16(at[2:], nextOr(next, ok, h.Ethernet.Type, header.EtherTypeLocal))
	case hMPLS:
		w := uint32(h.MPLS[x.i].TC&7) << 9
		if x.last {
			w |= 1 << 8
		}
		binary.BigEndian.PutUint32(at, w)
	case hIPv4:
		ip := header.IPv4(at)
		clear(ip[:header.IPv4MinLen])
		ip.Init()
		ip.SetTOS(0, h.IPv4.ECN)
		ip.SetDontFragment(h.IPv4.DF)
		ip.SetProtocol(uint8(nextOr(next, ok, uint16(h.IPv4.Protocol), 253)))
	case hIPv6:
		ip := header.IPv6(at)
		clear(ip[:header.IPv6Len])
		ip.SetVersionClassFlow(h.IPv6.ECN, 0)
		ip.SetNextHeader(uint8(nextOr(next, ok, uint16(h.IPv6.NextHeader), 253)))
		binary.BigEndian.PutUint64(ip[8:], h.IPv6.Src.Hi)
		binary.BigEndian.PutUint64(ip[24:], h.IPv6.Dst.Hi)
	case hARP:
		a := header.ARP(at)
		a.Init()
		a.SetOp(h.ARP.Op)
	case hUDP:
		binary.BigEndian.PutUint16(at[6:], 0)
	case hTCP:
		t := header.TCP(at)
		clear(t[:x.n])
		t.SetDataOffset(x.n)
		t.SetFlags(h.TCP.Flags)
		t.SetWindow(h.TCP.Window)
		writeTCPOptions(t[header.TCPMinLen:x.n], h.TCP.Options)
	case hICMP:
		c := header.ICMP(at)
		var typ uint8
		switch {
		case x.v6 && h.ICMP.Reply:
			typ = header.ICMPv6EchoReply
		case x.v6:
			typ = header.ICMPv6EchoRequest
		case h.ICMP.Reply:
			typ = header.ICMPv4EchoReply
		default:
			typ = header.ICMPv4EchoRequest
		}
		c.SetTypeCode(typ, 0)
		binary.BigEndian.PutUint16(c[2:], 0)
	case hGRE:
		t := h.Tunnel
		g := header.GRE(at)
		clear(g[:x.n])
		g.SetFlags(t.Checksum, t.Key != nil, t.Seq != nil)
		g.SetProtocol(next)
	case hVXLAN:
		clear(at[:8])
		at[0] = header.VXLANFlagVNI
	case hGeneve:
		clear(at[:8])
		binary.BigEndian.PutUint16(at[2:], header.EtherTypeTEB)
	case hRaw:
		copy(at, x.raw.Bytes)
	}
}

// nextOr is the next-protocol value of a header: next when the header
// after it names it (ok), else the one the template set, else none (the
// local experimental EtherType, IP protocol 253).
func nextOr(next uint16, ok bool, set, none uint16) uint16 {
	switch {
	case ok:
		return next
	case set != 0:
		return set
	}
	return none
}

// writeTCPOptions writes the options o into b (o.Len() bytes) in the order
// Linux sends them in a SYN: MSS, SACK permitted and timestamps, window
// scale, NOP-padded to 4-byte boundaries. TSval and TSecr are fields.
func writeTCPOptions(b []byte, o *TCPOptions) {
	if o == nil {
		return
	}
	i := 0
	if o.MSS != 0 {
		b[0], b[1] = header.TCPOptMSS, 4
		binary.BigEndian.PutUint16(b[2:], o.MSS)
		i = 4
	}
	switch {
	case o.Timestamps:
		if o.SACKPermitted {
			b[i], b[i+1] = header.TCPOptSACKPermitted, 2
		} else {
			b[i], b[i+1] = header.TCPOptNOP, header.TCPOptNOP
		}
		b[i+2], b[i+3] = header.TCPOptTimestamps, 10
		i += 12
	case o.SACKPermitted:
		b[i], b[i+1], b[i+2], b[i+3] = header.TCPOptNOP, header.TCPOptNOP, header.TCPOptSACKPermitted, 2
		i += 4
	}
	if o.WScale >= 0 {
		b[i], b[i+1], b[i+2], b[i+3] = header.TCPOptNOP, header.TCPOptWScale, 3, uint8(o.WScale)
	}
}

// pseudoSum is the pseudo-header sum of checksum c over a segment of n
// bytes, from the addresses in b.
func (c *cksum) pseudoSum(b []byte, n int) uint64 {
	switch {
	case c.pseudo < 0:
		return 0
	case c.v6:
		h := header.IPv6(b[c.pseudo:])
		return header.PseudoSumIPv6(h.Src(), h.Dst(), c.proto, n)
	}
	h := header.IPv4(b[c.pseudo:])
	return header.PseudoSumIPv4(h.Src(), h.Dst(), c.proto, n)
}

func (c *cksum) region(b []byte) []byte {
	if c.end < 0 {
		return b[c.start:]
	}
	return b[c.start:c.end]
}

// finish turns a folded sum into the value written: complemented, a UDP 0
// sent as 0xffff, made wrong on request.
func (c *cksum) finish(sum uint64) uint16 {
	x := finishSum(sum, c.udp)
	if c.bad {
		x = badSum(x, c.udp)
	}
	return x
}

// badSum makes a right checksum x wrong: its lowest bit flipped, which no
// one's-complement equivalence undoes (0x0000 and 0xffff are the same sum,
// x^1 is never the other). For UDP, where 0 means "no checksum" and a
// right value is never 0, it steps through 1…0xffff instead (0xffff → 1).
func badSum(x uint16, udp bool) uint16 {
	if !udp {
		return x ^ 1
	}
	if x == 0xffff {
		return 1
	}
	return x + 1
}

// goodSum undoes badSum.
func goodSum(x uint16, udp bool) uint16 {
	if !udp {
		return x ^ 1
	}
	if x == 1 {
		return 0xffff
	}
	return x - 1
}

// checksums computes every checksum of frame b in full, innermost first.
func (L *layout) checksums(b []byte) {
	for i := range L.cks {
		c := &L.cks[i]
		binary.BigEndian.PutUint16(b[c.field:], 0)
		seg := c.region(b)
		binary.BigEndian.PutUint16(b[c.field:], c.finish(header.Sum(seg, c.pseudoSum(b, len(seg)))))
	}
}

// baseSums returns the one's-complement sums a streaming patcher starts
// from for a frame of size n, per checksum: the frame with every varying
// field zeroed, signature sequence and time zero, checksum fields zero,
// plus the pseudo-header. scratch must hold n bytes.
func (L *layout) baseSums(scratch []byte, n int) (sums [maxCks]uint64) {
	L.write(scratch, n, 0, 0, true)
	b := scratch[:n]
	for i := range L.cks {
		c := &L.cks[i]
		seg := c.region(b)
		// Addresses may be varying (zeroed here): the sum has only the
		// constant part of the pseudo-header.
		sums[i] = header.Sum(seg, c.pseudoSum(b, len(seg)))
	}
	return sums
}
