package template

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
)

// namedField is a field that may vary, by its path in the stream ("ipv4.dst").
type namedField struct {
	path string
	v    *Value
}

// fieldsOf lists the fields of st that may vary, by their paths in the
// template relative to the stream, in frame order.
func fieldsOf(st *Stream) []namedField {
	var out []namedField
	add := func(path string, v *Value) { out = append(out, namedField{path, v}) }
	var walk func(h *Headers, pre string, eth bool)
	walk = func(h *Headers, pre string, eth bool) {
		if eth {
			add(pre+"ethernet.dst", &h.Ethernet.Dst)
			add(pre+"ethernet.src", &h.Ethernet.Src)
		}
		switch len(h.VLANs) {
		case 1:
			add(pre+"vlan.id", &h.VLANs[0].ID)
		case 2:
			add(pre+"qinq.outer.id", &h.VLANs[0].ID)
			add(pre+"qinq.inner.id", &h.VLANs[1].ID)
		}
		for i := range h.MPLS {
			add(fmt.Sprintf("%smpls[%d].label", pre, i), &h.MPLS[i].Label)
			add(fmt.Sprintf("%smpls[%d].ttl", pre, i), &h.MPLS[i].TTL)
		}
		switch {
		case h.IPv4 != nil:
			x := h.IPv4
			add(pre+"ipv4.dscp", &x.DSCP)
			add(pre+"ipv4.id", &x.ID)
			add(pre+"ipv4.ttl", &x.TTL)
			add(pre+"ipv4.src", &x.Src)
			add(pre+"ipv4.dst", &x.Dst)
		case h.IPv6 != nil:
			x := h.IPv6
			add(pre+"ipv6.dscp", &x.DSCP)
			add(pre+"ipv6.flow_label", &x.FlowLabel)
			add(pre+"ipv6.hop_limit", &x.HopLimit)
			add(pre+"ipv6.src", &x.Src.Lo)
			add(pre+"ipv6.dst", &x.Dst.Lo)
		case h.ARP != nil:
			x := h.ARP
			add(pre+"arp.sha", &x.SHA)
			add(pre+"arp.spa", &x.SPA)
			add(pre+"arp.tha", &x.THA)
			add(pre+"arp.tpa", &x.TPA)
		}
		switch {
		case h.UDP != nil:
			add(pre+"udp.src", &h.UDP.Src)
			add(pre+"udp.dst", &h.UDP.Dst)
		case h.TCP != nil:
			x := h.TCP
			add(pre+"tcp.src", &x.Src)
			add(pre+"tcp.dst", &x.Dst)
			add(pre+"tcp.seq", &x.Seq)
			add(pre+"tcp.ack", &x.Ack)
			if o := x.Options; o != nil && o.Timestamps {
				add(pre+"tcp.options.tsval", &o.TSVal)
				add(pre+"tcp.options.tsecr", &o.TSEcr)
			}
		case h.ICMP != nil:
			k := "icmp"
			if h.IPv6 != nil {
				k = "icmpv6"
			}
			add(pre+k+".id", &h.ICMP.ID)
			add(pre+k+".seq", &h.ICMP.Seq)
		}
		if t := h.Tunnel; t != nil {
			if t.Kind == TunnelGRE {
				if t.Key != nil {
					add(pre+"gre.key", t.Key)
				}
				if t.Seq != nil {
					add(pre+"gre.seq", t.Seq)
				}
			} else {
				add(pre+t.Kind+".vni", &t.VNI)
			}
			walk(&t.Inner, pre+t.Kind+".inner.", t.Ethernet)
		}
	}
	walk(&st.Headers, "", true)
	for i := range st.Payload.Fields {
		add(fmt.Sprintf("payload.fields[%d].value", i), &st.Payload.Fields[i].Value)
	}
	return out
}

// maxTuplePeriod bounds the packets after which a tuple repeats.
const maxTuplePeriod = 1 << 48

// tuple applies `tuple: [a, b, …]`: the fields vary as a cross product,
// the first slowest (like nested loops written in that order, or an
// odometer): every value of the last field for each value of the one
// before it, and so on. Field i holds each of its values for the product
// of the periods of the fields after it (Value.Div).
func (p *parser0) tuple(x node, path string, st *Stream) error {
	tp := path + ".tuple"
	seq := x.n
	if seq.kind != ySequence || seq.n == 0 {
		return p.errAt(x.n, tp, "tuple must be a list of field paths", "write tuple: [ipv4.dst, tcp.dst] (the first field varies slowest)")
	}
	fields := fieldsOf(st)
	var names []string
	for _, f := range fields {
		names = append(names, f.path)
	}
	var picked []*Value
	for i, it := range seq.items() {
		ip := fmt.Sprintf("%s[%d]", tp, i)
		if !isScalar(it) {
			return p.errAt(it, ip, "a tuple entry must be a field path", "write tuple: [ipv4.dst, tcp.dst]")
		}
		name := strings.TrimSpace(scalarText(it))
		j := slices.Index(names, name)
		if j < 0 {
			fix := "name a field of this stream that may vary: " + strings.Join(names, ", ")
			if name == "size" {
				fix = "size cannot be in a tuple; vary it in lockstep (size: [64, 128]) or use one stream per size"
			} else if s := closest(name, names); s != "" {
				fix = fmt.Sprintf("did you mean %q? ", s) + fix
			}
			return p.errAt(it, ip, fmt.Sprintf("%q is not a field of this stream", name), fix)
		}
		if slices.Contains(st.Tuple, name) {
			return p.errAt(it, ip, fmt.Sprintf("%s is in the tuple twice", name), "list each field once")
		}
		v := fields[j].v
		if v.Kind == Random {
			return p.errAt(it, ip, fmt.Sprintf("%s is random: a tuple walks every combination of values, and a random field has no list to walk", name), "give it a range or a list, or leave it out of the tuple")
		}
		st.Tuple = append(st.Tuple, name)
		picked = append(picked, v)
	}
	div := uint64(1)
	for i := len(picked) - 1; i >= 0; i-- {
		v := picked[i]
		if div > 1 {
			v.Div = div
		}
		hi, lo := bits.Mul64(div, v.steps())
		if hi != 0 || lo > maxTuplePeriod {
			return p.errAt(seq, tp, fmt.Sprintf("the tuple has more than 2^48 combinations (at %s)", st.Tuple[i]), "narrow its ranges, or split it into streams")
		}
		div = lo
	}
	return nil
}
