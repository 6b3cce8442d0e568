package template

import (
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/wpg-dev/wpg/header"
)

func (p *parser0) vlan(r *rawVLAN, path string, defTPID uint16) (VLAN, error) {
	v := VLAN{}
	var err error
	if !r.ID.set() {
		return v, p.keyErr(path, "a VLAN tag needs an id", "write id: 100 (1..4094)")
	}
	if v.ID, err = p.opt(r.ID, path+".id", tVID, Fix(1)); err != nil {
		return v, err
	}
	pcp, err := p.optFixed(r.PCP, path+".pcp", tPCP, 0)
	if err != nil {
		return v, err
	}
	v.PCP = uint8(pcp)
	if v.DEI, err = p.optBool(r.DEI, path+".dei", false); err != nil {
		return v, err
	}
	tpid, err := p.optFixed(r.TPID, path+".tpid", ftype{"TPID", fUint, 0xffff, "0x8100"}, uint64(defTPID))
	if err != nil {
		return v, err
	}
	v.TPID = uint16(tpid)
	return v, nil
}

func (p *parser0) ipv4(r *rawIPv4, path string, hasL4 bool) (*IPv4, error) {
	h := &IPv4{}
	var err error
	if h.Src, err = p.opt(r.Src, path+".src", tIPv4, ip4Src); err != nil {
		return nil, err
	}
	if h.Dst, err = p.opt(r.Dst, path+".dst", tIPv4, ip4Dst); err != nil {
		return nil, err
	}
	if h.TTL, err = p.opt(r.TTL, path+".ttl", tU8, Fix(64)); err != nil {
		return nil, err
	}
	if h.DSCP, err = p.opt(r.DSCP, path+".dscp", tDSCP, Fix(0)); err != nil {
		return nil, err
	}
	if h.ID, err = p.opt(r.ID, path+".id", tU16, Fix(0)); err != nil {
		return nil, err
	}
	ecn, err := p.optFixed(r.ECN, path+".ecn", tECN, 0)
	if err != nil {
		return nil, err
	}
	h.ECN = uint8(ecn)
	if h.DF, err = p.optBool(r.DF, path+".df", true); err != nil {
		return nil, err
	}
	proto, err := p.optFixed(r.Protocol, path+".protocol", tU8, 0)
	if err != nil {
		return nil, err
	}
	if r.Protocol.set() && hasL4 {
		return nil, p.errAt(r.Protocol.n, path+".protocol", "protocol is set from the udp/tcp/icmp layer", "remove ipv4.protocol (it is only for raw payload over IPv4)")
	}
	h.Protocol = uint8(proto)
	if h.Checksum, err = p.checksum(r.Checksum, path+".checksum", false, ChecksumRight); err != nil {
		return nil, err
	}
	if r.Fragment != nil {
		if r.DF.set() && h.DF {
			return nil, p.errAt(r.DF.n, path+".df", "df: true forbids the fragments fragment asks for", "remove df (fragments are sent with DF clear)")
		}
		h.DF = false
		if !r.ID.set() { // each datagram its own identification
			h.ID = Value{Kind: Increment, From: 0, To: 65535, Step: 1}
		}
		if h.Fragment, err = p.fragment(r.Fragment, path+".fragment", false); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// fragment parses fragment: {mtu, id}; id only for IPv6 (IPv4 has ipv4.id).
func (p *parser0) fragment(r *rawFragment, path string, v6 bool) (*Fragment, error) {
	if !r.MTU.set() {
		return nil, p.keyErr(path, "fragment needs an mtu", "write fragment: {mtu: 1500} (the largest IP packet of a fragment)")
	}
	lo := uint64(header.IPv4MinLen + 8)
	if v6 {
		lo = header.IPv6Len + 8 + 8
	}
	mtu, err := p.optFixed(r.MTU, path+".mtu", ftype{"MTU", fUint, MaxFrameSize - header.EthernetLen, "1500"}, 0)
	if err != nil {
		return nil, err
	}
	if mtu < lo {
		return nil, p.errAt(r.MTU.n, path+".mtu", fmt.Sprintf("an MTU of %d leaves no room for 8 bytes of fragment data", mtu), fmt.Sprintf("use an mtu of at least %d (the IPv6 minimum is 1280, IPv4's 68)", lo))
	}
	f := &Fragment{MTU: int(mtu)}
	if r.ID.set() && !v6 {
		return nil, p.errAt(r.ID.n, path+".id", "IPv4 fragments carry ipv4.id", "set ipv4.id instead (it counts per datagram by default)")
	}
	if v6 {
		if f.ID, err = p.opt(r.ID, path+".id", tU32, Value{Kind: Increment, From: 0, To: 1<<32 - 1, Step: 1}); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func (p *parser0) ip6(x node, path string, def IPv6Addr) (IPv6Addr, error) {
	if !x.set() {
		return def, nil
	}
	v, hi, err := p.value(x.n, path, tIPv6)
	return IPv6Addr{Hi: hi, Lo: v}, err
}

func (p *parser0) ipv6(r *rawIPv6, path string, hasL4 bool) (*IPv6, error) {
	h := &IPv6{}
	var err error
	if h.Src, err = p.ip6(r.Src, path+".src", IPv6Addr{ip6Hi, Fix(1)}); err != nil {
		return nil, err
	}
	if h.Dst, err = p.ip6(r.Dst, path+".dst", IPv6Addr{ip6Hi, Fix(2)}); err != nil {
		return nil, err
	}
	if h.HopLimit, err = p.opt(r.HopLimit, path+".hop_limit", tU8, Fix(64)); err != nil {
		return nil, err
	}
	if h.DSCP, err = p.opt(r.DSCP, path+".dscp", tDSCP, Fix(0)); err != nil {
		return nil, err
	}
	if h.FlowLabel, err = p.opt(r.FlowLabel, path+".flow_label", tFlow, Fix(0)); err != nil {
		return nil, err
	}
	ecn, err := p.optFixed(r.ECN, path+".ecn", tECN, 0)
	if err != nil {
		return nil, err
	}
	h.ECN = uint8(ecn)
	nh, err := p.optFixed(r.NextHeader, path+".next_header", tU8, 0)
	if err != nil {
		return nil, err
	}
	if r.NextHeader.set() && hasL4 {
		return nil, p.errAt(r.NextHeader.n, path+".next_header", "next_header is set from the udp/tcp/icmpv6 layer", "remove ipv6.next_header (it is only for raw payload over IPv6)")
	}
	h.NextHeader = uint8(nh)
	if r.Fragment != nil {
		if h.Fragment, err = p.fragment(r.Fragment, path+".fragment", true); err != nil {
			return nil, err
		}
	}
	return h, nil
}

func (p *parser0) arp(r *rawARP, path string, ethSrc Value) (*ARP, error) {
	a := &ARP{Op: header.ARPRequest}
	var err error
	if r.Op.set() {
		s, err := p.text(r.Op, path+".op", "request or reply")
		if err != nil {
			return nil, err
		}
		switch s {
		case "request", "1":
			a.Op = header.ARPRequest
		case "reply", "2":
			a.Op = header.ARPReply
		default:
			return nil, p.errAt(r.Op.n, path+".op", fmt.Sprintf("unknown ARP operation %q", s), "use request or reply")
		}
	}
	if a.SHA, err = p.opt(r.SHA, path+".sha", tMAC, ethSrc); err != nil {
		return nil, err
	}
	defTHA := Fix(0)
	if a.Op == header.ARPReply {
		defTHA = macDst
	}
	if a.THA, err = p.opt(r.THA, path+".tha", tMAC, defTHA); err != nil {
		return nil, err
	}
	if a.SPA, err = p.opt(r.SPA, path+".spa", tIPv4, ip4Src); err != nil {
		return nil, err
	}
	if a.TPA, err = p.opt(r.TPA, path+".tpa", tIPv4, ip4Dst); err != nil {
		return nil, err
	}
	return a, nil
}

var tcpFlagNames = []string{"fin", "syn", "rst", "psh", "ack", "urg", "ece", "cwr"}

func (p *parser0) tcp(r *rawTCP, path string) (*TCP, error) {
	t := &TCP{Flags: header.TCPSyn, Window: 65535}
	var err error
	if t.Src, err = p.opt(r.Src, path+".src", tPort, Fix(1024)); err != nil {
		return nil, err
	}
	if t.Dst, err = p.opt(r.Dst, path+".dst", tPort, Fix(9)); err != nil {
		return nil, err
	}
	if t.Seq, err = p.opt(r.Seq, path+".seq", tU32, Fix(0)); err != nil {
		return nil, err
	}
	if t.Ack, err = p.opt(r.Ack, path+".ack", tU32, Fix(0)); err != nil {
		return nil, err
	}
	w, err := p.optFixed(r.Window, path+".window", tU16, 65535)
	if err != nil {
		return nil, err
	}
	t.Window = uint16(w)
	if r.Flags.set() {
		items := []*ynode{r.Flags.n}
		if r.Flags.n.kind == ySequence {
			items = items[:0]
			for _, it := range r.Flags.n.items() {
				items = append(items, it)
			}
		}
		t.Flags = 0
		for i, it := range items {
			fp := fmt.Sprintf("%s.flags[%d]", path, i)
			if !isScalar(it) {
				return nil, p.errAt(it, fp, "a TCP flag must be a name", "write flags: [syn, ack]")
			}
			name := strings.ToLower(strings.TrimSpace(scalarText(it)))
			bit := slices.Index(tcpFlagNames, name)
			if bit < 0 {
				return nil, p.errAt(it, fp, fmt.Sprintf("unknown TCP flag %q", name), "use "+strings.Join(tcpFlagNames, ", "))
			}
			t.Flags |= 1 << bit
		}
	}
	if t.Checksum, err = p.checksum(r.Checksum, path+".checksum", false, ChecksumRight); err != nil {
		return nil, err
	}
	if o := r.Options; o != nil {
		op := path + ".options"
		t.Options = &TCPOptions{WScale: -1}
		mss, err := p.optFixed(o.MSS, op+".mss", tU16, 0)
		if err != nil {
			return nil, err
		}
		if o.MSS.set() && mss == 0 {
			return nil, p.errAt(o.MSS.n, op+".mss", "MSS 0 is not sent", "use an MSS such as 1460, or remove mss")
		}
		t.Options.MSS = uint16(mss)
		if o.WScale.set() {
			ws, err := p.optFixed(o.WScale, op+".wscale", ftype{"window scale", fUint, 14, "7"}, 0)
			if err != nil {
				return nil, err
			}
			t.Options.WScale = int(ws)
		}
		if t.Options.SACKPermitted, err = p.optBool(o.SACK, op+".sack_permitted", false); err != nil {
			return nil, err
		}
		ts := o.TSVal.set() || o.TSEcr.set()
		if o.Timestamps.set() {
			on, err := p.optBool(o.Timestamps, op+".timestamps", false)
			if err != nil {
				return nil, err
			}
			if !on && ts {
				return nil, p.errAt(o.Timestamps.n, op+".timestamps", "timestamps: false with tsval or tsecr", "remove timestamps: false (tsval and tsecr turn the option on)")
			}
			ts = on
		}
		t.Options.Timestamps = ts
		if t.Options.TSVal, err = p.opt(o.TSVal, op+".tsval", tU32, Fix(1)); err != nil {
			return nil, err
		}
		if t.Options.TSEcr, err = p.opt(o.TSEcr, op+".tsecr", tU32, Fix(0)); err != nil {
			return nil, err
		}
		if t.Options.Len() == 0 {
			return nil, p.keyErr(op, "options: no option is turned on", "give mss, wscale, sack_permitted: true or timestamps: true, or remove options")
		}
	}
	return t, nil
}

func (p *parser0) icmp(r *rawICMP, path string) (*ICMP, error) {
	c := &ICMP{}
	var err error
	if r.Type.set() {
		s, err := p.text(r.Type, path+".type", "echo-request or echo-reply")
		if err != nil {
			return nil, err
		}
		switch s {
		case "echo-request":
		case "echo-reply":
			c.Reply = true
		default:
			return nil, p.errAt(r.Type.n, path+".type", fmt.Sprintf("unsupported ICMP type %q", s), "use echo-request or echo-reply")
		}
	}
	if c.ID, err = p.opt(r.ID, path+".id", tU16, Fix(1)); err != nil {
		return nil, err
	}
	if c.Seq, err = p.opt(r.Seq, path+".seq", tU16, Value{Kind: Increment, From: 0, To: 65535, Step: 1}); err != nil {
		return nil, err
	}
	if c.Checksum, err = p.checksum(r.Checksum, path+".checksum", false, ChecksumRight); err != nil {
		return nil, err
	}
	return c, nil
}

func (p *parser0) payload(r *rawPayload, path string, st *Stream) error {
	if r.Pattern.set() && r.Text.set() {
		return p.errAt(r.Text.n, path+".text", "pattern and text are exclusive", "use pattern (hex bytes) or text, not both")
	}
	if r.Pattern.set() {
		s, err := p.text(r.Pattern, path+".pattern", "a hex byte string")
		if err != nil {
			return err
		}
		s = strings.NewReplacer(" ", "", ":", "", "0x", "").Replace(s)
		b, err := hex.DecodeString(s)
		if err != nil || len(b) == 0 {
			return p.errAt(r.Pattern.n, path+".pattern", fmt.Sprintf("%q is not a hex byte pattern", scalarText(r.Pattern.n)), `write hex bytes, e.g. pattern: "deadbeef"`)
		}
		st.Payload.Pattern = b
	}
	if r.Text.set() {
		if !isScalar(r.Text.n) {
			return p.errAt(r.Text.n, path+".text", "expected text here", `write text: "hello"`)
		}
		st.Payload.Pattern = []byte(scalarText(r.Text.n))
	}
	for i, f := range r.Fields {
		fp := fmt.Sprintf("%s.fields[%d]", path, i)
		if !f.Offset.set() || !f.Value.set() {
			return p.errAt(nil, fp, "a payload field needs offset and value", "write {offset: 0, width: 4, value: {from: 0, to: 1000}}")
		}
		off, err := p.optFixed(f.Offset, fp+".offset", ftype{"offset", fUint, MaxFrameSize, "0"}, 0)
		if err != nil {
			return err
		}
		w, err := p.optFixed(f.Width, fp+".width", ftype{"width", fUint, 4, "4"}, 1)
		if err != nil {
			return err
		}
		if w != 1 && w != 2 && w != 4 {
			return p.errAt(f.Width.n, fp+".width", fmt.Sprintf("width %d is not supported", w), "use 1, 2 or 4 bytes")
		}
		t := ftype{fmt.Sprintf("%d-byte value", w), fUint, 1<<(8*w) - 1, "1"}
		v, _, err := p.value(f.Value.n, fp+".value", t)
		if err != nil {
			return err
		}
		for j, g := range st.Payload.Fields {
			if int(off) < g.Offset+g.Width && g.Offset < int(off)+int(w) {
				return p.errAt(f.Offset.n, fp+".offset", fmt.Sprintf("overlaps payload field %d", j), "give each field its own bytes")
			}
		}
		st.Payload.Fields = append(st.Payload.Fields, PayloadField{Offset: int(off), Width: int(w), Value: v})
	}
	return nil
}

// DefaultIMIX is the simple IMIX: 7 × 64, 4 × 594, 1 × 1514 bytes. The
// classic large size, 1518, counts the 4-byte FCS, which wpg's frame sizes
// leave out: 1514 is the largest untagged frame a 1500-byte MTU carries.
var DefaultIMIX = struct{ Sizes, Weights []uint64 }{[]uint64{64, 594, 1514}, []uint64{7, 4, 1}}

const maxIMIXPeriod = 1 << 20

func (p *parser0) size(n *ynode, path string) (Value, error) {
	if isScalar(n) && strings.TrimSpace(scalarText(n)) == "imix" {
		return weighted(DefaultIMIX.Sizes, DefaultIMIX.Weights), nil
	}
	if k0, v0 := n.pair(0); n.kind == yMapping && k0 != nil && k0.text == "imix" {
		ip := path + ".imix"
		if k1, _ := n.pair(1); k1 != nil {
			return Value{}, p.errAt(k1, joinPath(path, k1.text), "imix takes no other keys", "write size: {imix: {64: 7, 594: 4, 1514: 1}}")
		}
		if v0.kind != yMapping || v0.n == 0 {
			return Value{}, p.errAt(v0, ip, "imix weights must be a mapping of size: weight", "write size: {imix: {64: 7, 594: 4, 1514: 1}} or size: imix for that default")
		}
		wm := v0
		var sizes, weights []uint64
		var total uint64
		for key, val := range wm.pairs() {
			k := key.text
			_, sz, err := p.atom(key, ip+"."+k, tSize)
			if err != nil {
				return Value{}, err
			}
			_, w, err := p.atom(val, ip+"."+k, ftype{"IMIX weight", fUint, maxIMIXPeriod, "7"})
			if err != nil {
				return Value{}, err
			}
			if w == 0 {
				continue
			}
			sizes = append(sizes, sz)
			weights = append(weights, w)
			total += w
		}
		if total == 0 {
			return Value{}, p.errAt(wm, ip, "all imix weights are 0", "give at least one size a weight of 1 or more")
		}
		if total > maxIMIXPeriod {
			return Value{}, p.errAt(wm, ip, fmt.Sprintf("imix weights add up to %d", total), fmt.Sprintf("use small whole-number weights (total at most %d), e.g. 7, 4, 1", maxIMIXPeriod))
		}
		return weighted(sizes, weights), nil
	}
	v, _, err := p.value(n, path, tSize)
	if err != nil {
		var te *Error
		if errors.As(err, &te) && strings.Contains(te.Msg, "is not a frame size") {
			te.Remedy = "use a number of bytes such as 64, a range {from: 64, to: 1514}, a list [64, 128], imix, or {imix: {64: 7, 594: 4, 1514: 1}}"
		}
	}
	return v, err
}

func weighted(sizes, weights []uint64) Value {
	return Value{Kind: Weighted, List: interleave(sizes, weights), Sizes: sizes, Weights: weights, From: slices.Min(sizes), To: slices.Max(sizes)}
}
