package template

import (
	"slices"

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
	// stream while parsing): no slot, header, checksum or length field is
	// kept, only counted (n).
	measure bool
	n       layoutCount
}

// layoutCount is how many slots, headers, checksums and length fields a
// layout has, as a measuring pass counts them.
type layoutCount struct{ slots, hdrs, cks, lens int }

func newLayout(st *Stream, id uint16) *layout {
	// Count first and allocate once: a template may hold 65,535
	// streams, and slices grown by doubling took several times the
	// memory of the slots they ended with.
	m := layout{st: st, measure: true}
	m.stack(&st.Headers, true, 0)
	L := &layout{st: st, id: id,
		slots: make([]slot, 0, m.n.slots+len(st.Payload.Fields)),
		hdrs:  make([]lhdr, 0, m.n.hdrs),
		cks:   make([]cksum, 0, min(m.n.cks, maxCks)),
		lens:  make([]lenField, 0, m.n.lens)}
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
		L.n.slots++
		return
	}
	L.slots = append(L.slots, slot{name: name, v: v, off: off, width: width, shift: shift, mask: (1<<uint(bits) - 1) << shift})
}

func (L *layout) hdr(x lhdr) {
	if L.measure {
		L.n.hdrs++
		return
	}
	L.hdrs = append(L.hdrs, x)
}

// checksum appends a checksum, mode m (a zero UDP checksum is none).
func (L *layout) checksum(c cksum, m Checksum) {
	if L.measure && m != ChecksumZero {
		L.n.cks++
	}
	if m == ChecksumZero || len(L.cks) == maxCks || L.measure {
		return
	}
	c.bad = m == ChecksumBad
	L.cks = append(L.cks, c)
}

// length appends a length field: the frame's length less sub at off.
func (L *layout) length(off, sub int) {
	if L.measure {
		L.n.lens++
		return
	}
	L.lens = append(L.lens, lenField{off, sub})
}

// stack lays out the headers of h from offset off (eth: h starts with its
// Ethernet header) and returns the offset after them: one step per layer,
// each followed by the raw layers written after it.
func (L *layout) stack(h *Headers, eth bool, off int) int {
	off = L.link(h, eth, off)
	off, l3, v6 := L.network(h, off)
	off = L.transport(h, off, l3, v6)
	return L.tunnel(h, off)
}

// raws lays out the raw layers of h written after the layer named after,
// from off, and returns the offset after them.
func (L *layout) raws(h *Headers, after string, off int) int {
	for i := range h.Raw {
		if r := &h.Raw[i]; r.After == after {
			L.hdr(lhdr{kind: hRaw, off: off, n: len(r.Bytes), h: h, raw: r})
			off += len(r.Bytes)
		}
	}
	return off
}

// link lays out the Ethernet header (eth), the VLAN tags and the MPLS
// labels.
func (L *layout) link(h *Headers, eth bool, off int) int {
	if eth {
		L.hdr(lhdr{kind: hEth, off: off, n: header.EthernetLen, h: h})
		L.add("ethernet.dst", h.Ethernet.Dst, off, 6, 0, 48)
		L.add("ethernet.src", h.Ethernet.Src, off+6, 6, 0, 48)
		off += header.EthernetLen
		off = L.raws(h, "ethernet", off)
	}
	for i, v := range h.VLANs {
		L.hdr(lhdr{kind: hVLAN, off: off, n: header.VLANLen, h: h, i: i})
		L.add("vlan["+string(rune('0'+i))+"].id", v.ID, off, 2, 0, 12)
		off += header.VLANLen
	}
	if len(h.VLANs) > 0 {
		off = L.raws(h, "vlan", off)
	}
	for i, m := range h.MPLS {
		L.hdr(lhdr{kind: hMPLS, off: off, n: 4, h: h, i: i, last: i == len(h.MPLS)-1})
		L.add("mpls.label", m.Label, off, 4, 12, 20)
		L.add("mpls.ttl", m.TTL, off+2, 2, 0, 8)
		off += 4
	}
	if len(h.MPLS) > 0 {
		off = L.raws(h, "mpls", off)
	}
	return off
}

// network lays out the IPv4, IPv6 or ARP header; l3 is the IP header's
// offset (-1 for none), for the pseudo-header of the checksums above it,
// and v6 says it is IPv6.
func (L *layout) network(h *Headers, off int) (next, l3 int, v6 bool) {
	l3 = -1
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
		L.length(off+2, off)
		off += header.IPv4MinLen
		off = L.raws(h, "ipv4", off)
	case h.IPv6 != nil:
		l3, v6 = off, true
		x := h.IPv6
		L.hdr(lhdr{kind: hIPv6, off: off, n: header.IPv6Len, h: h})
		L.add("ipv6.dscp", x.DSCP, off, 4, 22, 6)
		L.add("ipv6.flow_label", x.FlowLabel, off, 4, 0, 20)
		L.add("ipv6.hop_limit", x.HopLimit, off+6, 2, 0, 8)
		L.add("ipv6.src", x.Src.Lo, off+16, 8, 0, 64)
		L.add("ipv6.dst", x.Dst.Lo, off+32, 8, 0, 64)
		L.length(off+4, off+header.IPv6Len)
		off += header.IPv6Len
		off = L.raws(h, "ipv6", off)
	case h.ARP != nil:
		x := h.ARP
		L.hdr(lhdr{kind: hARP, off: off, n: header.ARPLen, h: h})
		L.add("arp.sha", x.SHA, off+8, 6, 0, 48)
		L.add("arp.spa", x.SPA, off+14, 4, 0, 32)
		L.add("arp.tha", x.THA, off+18, 6, 0, 48)
		L.add("arp.tpa", x.TPA, off+24, 4, 0, 32)
		off += header.ARPLen
		off = L.raws(h, "arp", off)
	}
	return off, l3, v6
}

// transport lays out the UDP, TCP or ICMP header over the IP header at l3
// (v6: IPv6).
func (L *layout) transport(h *Headers, off, l3 int, v6 bool) int {
	switch {
	case h.UDP != nil:
		L.hdr(lhdr{kind: hUDP, off: off, n: header.UDPLen, h: h})
		L.add("udp.src", h.UDP.Src, off, 2, 0, 16)
		L.add("udp.dst", h.UDP.Dst, off+2, 2, 0, 16)
		L.checksum(cksum{field: off + 6, start: off, end: -1, pseudo: l3, v6: v6, proto: header.ProtoUDP, udp: true}, h.UDP.Checksum)
		L.length(off+4, off)
		off += header.UDPLen
		off = L.raws(h, "udp", off)
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
		off = L.raws(h, "tcp", off)
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
			off = L.raws(h, "icmpv6", off)
		} else {
			off = L.raws(h, "icmp", off)
		}
	}
	return off
}

// tunnel lays out the tunnel header of h, if any, and its inner stack.
func (L *layout) tunnel(h *Headers, off int) int {
	t := h.Tunnel
	if t == nil {
		return off
	}
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
	off = L.raws(h, t.Kind, off)
	return L.stack(&t.Inner, t.Ethernet, off)
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
