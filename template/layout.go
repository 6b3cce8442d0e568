package template

import (
	"encoding/binary"
	"slices"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/header"
)

// maxCks bounds the checksums of one frame (bit i of a slot's cov is
// checksum i): outer IPv4 header, outer UDP (a UDP tunnel over IPv6), GRE,
// then the same again for each nested tunnel, and the inner L4.
const maxCks = 8

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
	cov   uint8 // the checksums (bits of layout.cks) the slot is covered by
}

// hkind is the kind of a header in a layout's stack.
type hkind uint8

const (
	hEth hkind = iota
	hVLAN
	hMPLS
	hIPv4
	hIPv6
	hARP
	hUDP
	hTCP
	hICMP
	hGRE
	hVXLAN
	hGeneve
	hRaw
)

// lhdr is one header of the stack at its frame offset.
type lhdr struct {
	kind hkind
	off  int
	n    int
	h    *Headers // the stack it belongs to
	i    int      // which VLAN tag or MPLS entry
	raw  *Raw
	last bool // MPLS: bottom of stack
	v6   bool // ICMP: ICMPv6
}

// cksum is a checksum of the frame: the field at field covers
// [start, end) (end -1: to the end of the frame), plus the pseudo-header
// of the IP header at pseudo (-1: none).
type cksum struct {
	field, start, end int
	pseudo            int
	v6                bool
	proto             uint8
	udp               bool // a computed 0 is sent as 0xffff
	bad               bool
}

// lenField is a 16-bit length field: frame length minus sub.
type lenField struct{ off, sub int }

// layout is where a stream's headers are, and its fields.
type layout struct {
	st   *Stream
	id   uint16
	hdrs []lhdr
	pay  int // first payload byte
	// cks are the checksums, innermost first (descending field offset):
	// one covering another's field is computed after it.
	cks   []cksum
	into  [maxCks]uint8 // the checksums covering checksum i's field
	tail  uint8         // the checksums that run to the end of the frame (and cover the signature)
	lens  []lenField
	slots []slot
	// measure: only the offsets are wanted (Stream.HeaderLen, once per
	// stream while parsing): no slot, header or checksum is kept.
	measure bool
}

func newLayout(st *Stream, id uint16) *layout {
	L := &layout{st: st, id: id}
	L.pay = L.stack(&st.Headers, true, 0)
	for _, f := range st.Payload.Fields {
		po := L.pay + f.Offset
		start := po &^ 1
		end := (po + f.Width + 1) &^ 1
		L.add("payload", f.Value, start, end-start, uint(8*(end-po-f.Width)), 8*f.Width)
	}
	// Innermost checksum first.
	slices.SortStableFunc(L.cks, func(a, b cksum) int { return b.field - a.field })
	covers := func(c *cksum, off int) bool {
		return off >= c.start && (c.end < 0 || off < c.end)
	}
	for i := range L.cks {
		c := &L.cks[i]
		if c.end < 0 {
			L.tail |= 1 << i
		}
		for j := range L.cks {
			if j != i && covers(&L.cks[j], c.field) {
				L.into[i] |= 1 << j
			}
		}
	}
	for s := range L.slots {
		sl := &L.slots[s]
		for i := range L.cks {
			c := &L.cks[i]
			in := covers(c, sl.off)
			if c.pseudo >= 0 {
				lo, hi := c.pseudo+12, c.pseudo+20
				if c.v6 {
					lo, hi = c.pseudo+8, c.pseudo+40
				}
				in = in || sl.off >= lo && sl.off < hi
			}
			if in {
				sl.cov |= 1 << i
			}
		}
	}
	return L
}

// add appends a field slot; its checksum coverage is worked out once every
// checksum is known.
func (L *layout) add(name string, v Value, off, width int, shift uint, bits int) {
	if L.measure {
		return
	}
	L.slots = append(L.slots, slot{name: name, v: v, off: off, width: width, shift: shift, mask: (1<<uint(bits) - 1) << shift})
}

func (L *layout) hdr(x lhdr) {
	if !L.measure {
		L.hdrs = append(L.hdrs, x)
	}
}

// checksum appends a checksum, mode m (a zero UDP checksum is none).
func (L *layout) checksum(c cksum, m Checksum) {
	if m == ChecksumZero || len(L.cks) == maxCks || L.measure {
		return
	}
	c.bad = m == ChecksumBad
	L.cks = append(L.cks, c)
}

// stack lays out the headers of h from offset off (eth: h starts with its
// Ethernet header) and returns the offset after them.
func (L *layout) stack(h *Headers, eth bool, off int) int {
	raw := func(after string) {
		for i := range h.Raw {
			if r := &h.Raw[i]; r.After == after {
				L.hdr(lhdr{kind: hRaw, off: off, n: len(r.Bytes), h: h, raw: r})
				off += len(r.Bytes)
			}
		}
	}
	if eth {
		L.hdr(lhdr{kind: hEth, off: off, n: header.EthernetLen, h: h})
		L.add("ethernet.dst", h.Ethernet.Dst, off, 6, 0, 48)
		L.add("ethernet.src", h.Ethernet.Src, off+6, 6, 0, 48)
		off += header.EthernetLen
		raw("ethernet")
	}
	for i, v := range h.VLANs {
		L.hdr(lhdr{kind: hVLAN, off: off, n: header.VLANLen, h: h, i: i})
		L.add("vlan["+string(rune('0'+i))+"].id", v.ID, off, 2, 0, 12)
		off += header.VLANLen
	}
	if len(h.VLANs) > 0 {
		raw("vlan")
	}
	for i, m := range h.MPLS {
		L.hdr(lhdr{kind: hMPLS, off: off, n: 4, h: h, i: i, last: i == len(h.MPLS)-1})
		L.add("mpls.label", m.Label, off, 4, 12, 20)
		L.add("mpls.ttl", m.TTL, off+2, 2, 0, 8)
		off += 4
	}
	if len(h.MPLS) > 0 {
		raw("mpls")
	}
	l3, v6 := -1, false
	switch {
	case h.IPv4 != nil:
		l3 = off
		x := h.IPv4
		L.hdr(lhdr{kind: hIPv4, off: off, n: header.IPv4MinLen, h: h})
		L.add("ipv4.dscp", x.DSCP, off, 2, 2, 6)
		L.add("ipv4.id", x.ID, off+4, 2, 0, 16)
		L.add("ipv4.ttl", x.TTL, off+8, 2, 8, 8)
		L.add("ipv4.src", x.Src, off+12, 4, 0, 32)
		L.add("ipv4.dst", x.Dst, off+16, 4, 0, 32)
		L.checksum(cksum{field: off + 10, start: off, end: off + header.IPv4MinLen, pseudo: -1}, x.Checksum)
		L.lens = append(L.lens, lenField{off + 2, off})
		off += header.IPv4MinLen
		raw("ipv4")
	case h.IPv6 != nil:
		l3, v6 = off, true
		x := h.IPv6
		L.hdr(lhdr{kind: hIPv6, off: off, n: header.IPv6Len, h: h})
		L.add("ipv6.dscp", x.DSCP, off, 4, 22, 6)
		L.add("ipv6.flow_label", x.FlowLabel, off, 4, 0, 20)
		L.add("ipv6.hop_limit", x.HopLimit, off+6, 2, 0, 8)
		L.add("ipv6.src", x.Src.Lo, off+16, 8, 0, 64)
		L.add("ipv6.dst", x.Dst.Lo, off+32, 8, 0, 64)
		L.lens = append(L.lens, lenField{off + 4, off + header.IPv6Len})
		off += header.IPv6Len
		raw("ipv6")
	case h.ARP != nil:
		x := h.ARP
		L.hdr(lhdr{kind: hARP, off: off, n: header.ARPLen, h: h})
		L.add("arp.sha", x.SHA, off+8, 6, 0, 48)
		L.add("arp.spa", x.SPA, off+14, 4, 0, 32)
		L.add("arp.tha", x.THA, off+18, 6, 0, 48)
		L.add("arp.tpa", x.TPA, off+24, 4, 0, 32)
		off += header.ARPLen
		raw("arp")
	}
	switch {
	case h.UDP != nil:
		L.hdr(lhdr{kind: hUDP, off: off, n: header.UDPLen, h: h})
		L.add("udp.src", h.UDP.Src, off, 2, 0, 16)
		L.add("udp.dst", h.UDP.Dst, off+2, 2, 0, 16)
		L.checksum(cksum{field: off + 6, start: off, end: -1, pseudo: l3, v6: v6, proto: header.ProtoUDP, udp: true}, h.UDP.Checksum)
		L.lens = append(L.lens, lenField{off + 4, off})
		off += header.UDPLen
		raw("udp")
	case h.TCP != nil:
		x := h.TCP
		n := header.TCPMinLen + x.Options.Len()
		L.hdr(lhdr{kind: hTCP, off: off, n: n, h: h})
		L.add("tcp.src", x.Src, off, 2, 0, 16)
		L.add("tcp.dst", x.Dst, off+2, 2, 0, 16)
		L.add("tcp.seq", x.Seq, off+4, 4, 0, 32)
		L.add("tcp.ack", x.Ack, off+8, 4, 0, 32)
		if o := x.Options; o != nil && o.Timestamps {
			// The 12 bytes of SACK permitted (or two NOPs) and timestamps
			// start after the MSS option; TSval is 4 bytes into them.
			ts := off + header.TCPMinLen + 4
			if o.MSS == 0 {
				ts -= 4
			}
			L.add("tcp.tsval", o.TSVal, ts+4, 4, 0, 32)
			L.add("tcp.tsecr", o.TSEcr, ts+8, 4, 0, 32)
		}
		L.checksum(cksum{field: off + 16, start: off, end: -1, pseudo: l3, v6: v6, proto: header.ProtoTCP}, x.Checksum)
		off += n
		raw("tcp")
	case h.ICMP != nil:
		L.hdr(lhdr{kind: hICMP, off: off, n: header.ICMPEchoLen, h: h, v6: v6})
		L.add("icmp.id", h.ICMP.ID, off+4, 2, 0, 16)
		L.add("icmp.seq", h.ICMP.Seq, off+6, 2, 0, 16)
		c := cksum{field: off + 2, start: off, end: -1, pseudo: -1}
		if v6 {
			c.pseudo, c.v6, c.proto = l3, true, header.ProtoICMPv6
		}
		L.checksum(c, h.ICMP.Checksum)
		off += header.ICMPEchoLen
		if v6 {
			raw("icmpv6")
		} else {
			raw("icmp")
		}
	}
	if t := h.Tunnel; t != nil {
		switch t.Kind {
		case TunnelGRE:
			n := 4
			at := off + 4
			if t.Checksum {
				mode := t.ChecksumMode
				L.checksum(cksum{field: off + 4, start: off, end: -1, pseudo: -1}, mode)
				n += 4
				at += 4
			}
			if t.Key != nil {
				L.add("gre.key", *t.Key, at, 4, 0, 32)
				n += 4
				at += 4
			}
			if t.Seq != nil {
				L.add("gre.seq", *t.Seq, at, 4, 0, 32)
				n += 4
			}
			L.hdr(lhdr{kind: hGRE, off: off, n: n, h: h})
			off += n
		case TunnelVXLAN, TunnelGeneve:
			k := hVXLAN
			if t.Kind == TunnelGeneve {
				k = hGeneve
			}
			L.hdr(lhdr{kind: k, off: off, n: 8, h: h})
			L.add(t.Kind+".vni", t.VNI, off+4, 4, 8, 24)
			off += 8
		}
		raw(t.Kind)
		off = L.stack(&t.Inner, t.Ethernet, off)
	}
	return off
}

// nextType is the value of the next-protocol field of header i: the raw
// layer's Type right after it, or what names the header after it.
func (L *layout) nextType(i int) (t uint16, ok bool) {
	for j := i + 1; j < len(L.hdrs); j++ {
		x := &L.hdrs[j]
		if x.kind == hRaw {
			if j == i+1 && x.raw.Type != 0 {
				return x.raw.Type, true
			}
			continue
		}
		switch x.kind {
		case hVLAN:
			return x.h.VLANs[x.i].TPID, true
		case hMPLS:
			return header.EtherTypeMPLS, true
		case hIPv4:
			return header.EtherTypeIPv4, true
		case hIPv6:
			return header.EtherTypeIPv6, true
		case hARP:
			return header.EtherTypeARP, true
		case hEth:
			return header.EtherTypeTEB, true
		case hUDP:
			return uint16(header.ProtoUDP), true
		case hTCP:
			return uint16(header.ProtoTCP), true
		case hICMP:
			if x.v6 {
				return uint16(header.ProtoICMPv6), true
			}
			return uint16(header.ProtoICMPv4), true
		case hGRE:
			return uint16(header.ProtoGRE), true
		}
		return 0, false
	}
	return 0, false
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
		if !ok {
			next = h.Ethernet.Type
			if next == 0 {
				next = header.EtherTypeLocal
			}
		}
		binary.BigEndian.PutUint16(at[12:], next)
	case hVLAN:
		v := h.VLANs[x.i]
		header.VLAN(at).SetTCI(v.PCP, v.DEI, 0)
		if !ok {
			next = h.Ethernet.Type
			if next == 0 {
				next = header.EtherTypeLocal
			}
		}
		binary.BigEndian.PutUint16(at[2:], next)
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
		if !ok {
			next = uint16(h.IPv4.Protocol)
			if next == 0 {
				next = 253
			}
		}
		ip.SetProtocol(uint8(next))
	case hIPv6:
		ip := header.IPv6(at)
		clear(ip[:header.IPv6Len])
		ip.SetVersionClassFlow(h.IPv6.ECN, 0)
		if !ok {
			next = uint16(h.IPv6.NextHeader)
			if next == 0 {
				next = 253
			}
		}
		ip.SetNextHeader(uint8(next))
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
