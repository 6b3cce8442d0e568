package template

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/wpg-dev/wpg/header"
)

// maxTunnelDepth is how deep tunnels nest: a tunnel inside a tunnel.
const maxTunnelDepth = 2

// Default UDP destination ports of the UDP tunnels (IANA).
const (
	PortVXLAN  = 4789
	PortGeneve = 6081
)

var (
	tLabel = ftype{"MPLS label", fUint, 1<<20 - 1, "100"}
	tTC    = ftype{"traffic class", fUint, 7, "0"}
	tVNI   = ftype{"VNI", fUint, 1<<24 - 1, "100"}
)

// headers decodes one layer stack into h: the stream's own (tunnel "") or
// the inner stack of a tunnel of that kind. path is the YAML path of the
// mapping holding the layer keys. One step per layer, outermost first.
func (p *parser0) headers(r *rawHeaders, path string, h *Headers, tunnel string) error {
	l3, l4, err := p.checkStack(r, path, tunnel)
	if err != nil {
		return err
	}
	hasEth, err := p.ethernet(r, path, h, tunnel, l3)
	if err != nil {
		return err
	}
	if err := p.vlans(r, path, h); err != nil {
		return err
	}
	if err := p.mpls(r, path, h); err != nil {
		return err
	}
	if err := p.layer3(r, path, h, tunnel, l4 > 0 || r.GRE != nil); err != nil {
		return err
	}
	if err := p.layer4(r, path, h); err != nil {
		return err
	}
	if err := p.tunnel(r, path, h); err != nil {
		return err
	}
	// Raw bytes after named layers.
	return p.raws(r, path, h, hasEth)
}

// countTrue is how many of xs are true.
func countTrue(xs ...bool) int {
	n := 0
	for _, x := range xs {
		if x {
			n++
		}
	}
	return n
}

// checkStack checks that the stack's layers go together (one of each
// kind, each on a layer that can carry it) and returns how many layer-3
// and layer-4 layers it has.
func (p *parser0) checkStack(r *rawHeaders, path string, tunnel string) (l3, l4 int, err error) {
	where := "a stream"
	if tunnel != "" {
		where = "an inner stack"
	}
	l3 = countTrue(r.IPv4 != nil, r.IPv6 != nil, r.ARP != nil)
	if l3 > 1 {
		return 0, 0, p.errAt(nil, path, where+" has at most one of ipv4, ipv6 and arp", "split the layers into two streams")
	}
	l4 = countTrue(r.UDP != nil, r.TCP != nil, r.ICMP != nil, r.ICMPv6 != nil)
	if l4 > 1 {
		return 0, 0, p.errAt(nil, path, where+" has at most one of udp, tcp, icmp and icmpv6", "split the layers into two streams")
	}
	if countTrue(r.GRE != nil, r.VXLAN != nil, r.Geneve != nil) > 1 {
		return 0, 0, p.errAt(nil, path, where+" has at most one of gre, vxlan and geneve", "put one tunnel inside the other's inner: stack, or split the stream")
	}
	if r.GRE != nil || r.VXLAN != nil || r.Geneve != nil {
		if strings.Count(path, ".inner") >= maxTunnelDepth {
			return 0, 0, p.errAt(nil, path, fmt.Sprintf("tunnels nest at most %d deep", maxTunnelDepth), "remove the innermost tunnel (its checksums and headers would not fit the frame's bookkeeping)")
		}
	}
	if r.VLAN != nil && r.QinQ != nil {
		return 0, 0, p.keyErr(path+".qinq", "vlan and qinq are exclusive", "use vlan for one 802.1Q tag or qinq {outer, inner} for two")
	}
	return l3, l4, p.checkCarriers(r, path, l4)
}

// checkCarriers checks that every layer has the layer that carries it.
func (p *parser0) checkCarriers(r *rawHeaders, path string, l4 int) error {
	switch {
	case (r.UDP != nil || r.TCP != nil) && r.IPv4 == nil && r.IPv6 == nil:
		l := "udp"
		if r.TCP != nil {
			l = "tcp"
		}
		return p.keyErr(path+"."+l, l+" needs an IP layer", "add ipv4: {} or ipv6: {} to the stream")
	case r.ICMP != nil && r.IPv4 == nil:
		fix := "add ipv4: {} to the stream"
		if r.IPv6 != nil {
			fix = "with ipv6, use icmpv6 instead of icmp"
		}
		return p.keyErr(path+".icmp", "icmp (ICMPv4) needs an ipv4 layer", fix)
	case r.ICMPv6 != nil && r.IPv6 == nil:
		fix := "add ipv6: {} to the stream"
		if r.IPv4 != nil {
			fix = "with ipv4, use icmp instead of icmpv6"
		}
		return p.keyErr(path+".icmpv6", "icmpv6 needs an ipv6 layer", fix)
	case r.GRE != nil && r.IPv4 == nil && r.IPv6 == nil:
		return p.keyErr(path+".gre", "gre needs an IP layer to ride in", "add ipv4: {} or ipv6: {} (GRE is IP protocol 47)")
	case r.GRE != nil && l4 > 0:
		return p.keyErr(path+".gre", "gre takes the place of udp/tcp/icmp after the IP layer", "remove the udp/tcp/icmp layer, or put it in gre.inner")
	case (r.VXLAN != nil || r.Geneve != nil) && r.UDP == nil:
		k, port := "vxlan", PortVXLAN
		if r.Geneve != nil {
			k, port = "geneve", PortGeneve
		}
		return p.keyErr(path+"."+k, k+" is carried in UDP", fmt.Sprintf("add ipv4: {} and udp: {} (its dst defaults to %d)", port))
	case r.ARP != nil && len(r.MPLS) > 0:
		return p.keyErr(path+".arp", "arp does not ride on MPLS", "remove mpls, or use ipv4/ipv6")
	}
	return nil
}

// ethernet decodes the Ethernet header into h.Ethernet and says whether
// the stack has one: always in a stream's own stack and inside
// VXLAN/Geneve; inside GRE only when written (then GRE carries 0x6558,
// transparent Ethernet bridging).
func (p *parser0) ethernet(r *rawHeaders, path string, h *Headers, tunnel string, l3 int) (hasEth bool, err error) {
	if tunnel == TunnelGRE && r.Ethernet == nil {
		switch {
		case r.VLAN != nil || r.QinQ != nil:
			return false, p.keyErr(path+".vlan", "VLAN tags need an Ethernet header", "add ethernet: {} to the inner stack (GRE then carries Ethernet, protocol 0x6558)")
		case r.ARP != nil:
			return false, p.keyErr(path+".arp", "arp needs an Ethernet header", "add ethernet: {} to the inner stack")
		case l3 == 0 && len(r.MPLS) == 0:
			return false, p.errAt(nil, path, "the GRE inner stack is empty", "give it a layer: ipv4, ipv6, mpls, or ethernet (then GRE carries Ethernet)")
		}
		return false, nil
	}
	eth := r.Ethernet
	if eth == nil {
		eth = &rawEthernet{}
	}
	ep := path + ".ethernet"
	defDst := macDst
	if r.ARP != nil {
		defDst = macBC
	}
	if h.Ethernet.Src, err = p.opt(eth.Src, ep+".src", tMAC, macSrc); err != nil {
		return true, err
	}
	if h.Ethernet.Dst, err = p.opt(eth.Dst, ep+".dst", tMAC, defDst); err != nil {
		return true, err
	}
	et, err := p.optFixed(eth.Type, ep+".type", ftype{"EtherType", fUint, 0xffff, "0x88b5"}, 0)
	if err != nil {
		return true, err
	}
	if eth.Type.set() && l3 > 0 {
		return true, p.errAt(eth.Type.n, ep+".type", "type is set from the ipv4/ipv6/arp layer", "remove ethernet.type (it is only for raw payload streams)")
	}
	if eth.Type.set() && len(r.MPLS) > 0 {
		return true, p.errAt(eth.Type.n, ep+".type", "type is set from the mpls layer (0x8847)", "remove ethernet.type")
	}
	if eth.Type.set() && et < 0x0600 {
		return true, p.errAt(eth.Type.n, ep+".type", fmt.Sprintf("EtherType %#04x is a length, not a type", et), "use a value >= 0x0600, e.g. 0x88b5")
	}
	h.Ethernet.Type = uint16(et)
	return true, nil
}

// vlans decodes the VLAN tags (vlan, or qinq's two) into h.VLANs.
func (p *parser0) vlans(r *rawHeaders, path string, h *Headers) error {
	if r.VLAN != nil {
		v, err := p.vlan(r.VLAN, path+".vlan", header.EtherTypeVLAN)
		if err != nil {
			return err
		}
		h.VLANs = []VLAN{v}
	}
	if r.QinQ != nil {
		if r.QinQ.Outer == nil || r.QinQ.Inner == nil {
			return p.keyErr(path+".qinq", "qinq needs both outer and inner tags", "write qinq: {outer: {id: 100}, inner: {id: 200}}")
		}
		o, err := p.vlan(r.QinQ.Outer, path+".qinq.outer", header.EtherTypeQinQ)
		if err != nil {
			return err
		}
		in, err := p.vlan(r.QinQ.Inner, path+".qinq.inner", header.EtherTypeVLAN)
		if err != nil {
			return err
		}
		h.VLANs = []VLAN{o, in}
	}
	return nil
}

// mpls decodes the MPLS labels into h.MPLS.
func (p *parser0) mpls(r *rawHeaders, path string, h *Headers) error {
	for i := range r.MPLS {
		m := &r.MPLS[i]
		mp := fmt.Sprintf("%s.mpls[%d]", path, i)
		if !m.Label.set() {
			return p.keyErr(mp, "an MPLS entry needs a label", "write mpls: [{label: 100}] (0..1048575; 16 and up are not reserved)")
		}
		var e MPLS
		var err error
		if e.Label, err = p.opt(m.Label, mp+".label", tLabel, Fix(16)); err != nil {
			return err
		}
		tc, err := p.optFixed(m.TC, mp+".tc", tTC, 0)
		if err != nil {
			return err
		}
		e.TC = uint8(tc)
		if e.TTL, err = p.opt(m.TTL, mp+".ttl", tU8, Fix(64)); err != nil {
			return err
		}
		h.MPLS = append(h.MPLS, e)
	}
	return nil
}

// layer3 decodes the IP or ARP layer into h (upper: a layer 4 or a
// tunnel follows).
func (p *parser0) layer3(r *rawHeaders, path string, h *Headers, tunnel string, upper bool) (err error) {
	if r.IPv4 != nil {
		if h.IPv4, err = p.ipv4(r.IPv4, path+".ipv4", upper); err != nil {
			return err
		}
	}
	if r.IPv6 != nil {
		if h.IPv6, err = p.ipv6(r.IPv6, path+".ipv6", upper); err != nil {
			return err
		}
	}
	if r.ARP != nil {
		if h.ARP, err = p.arp(r.ARP, path+".arp", h.Ethernet.Src); err != nil {
			return err
		}
	}
	if tunnel != "" && (r.IPv4 != nil && r.IPv4.Fragment != nil || r.IPv6 != nil && r.IPv6.Fragment != nil) {
		return p.keyErr(path+".fragment", "only the stream's own IP layer is fragmented", "move fragment to the outer ipv4/ipv6 (the tunnel's packets are then cut)")
	}
	return nil
}

// layer4 decodes the UDP, TCP or ICMP layer into h.
func (p *parser0) layer4(r *rawHeaders, path string, h *Headers) (err error) {
	switch {
	case r.UDP != nil:
		h.UDP, err = p.udp(r, path)
	case r.TCP != nil:
		h.TCP, err = p.tcp(r.TCP, path+".tcp")
	case r.ICMP != nil:
		h.ICMP, err = p.icmp(r.ICMP, path+".icmp")
	case r.ICMPv6 != nil:
		h.ICMP, err = p.icmp(r.ICMPv6, path+".icmpv6")
	}
	return err
}

// udp decodes the stack's UDP layer, whose defaults follow the tunnel it
// carries and the IP version under it.
func (p *parser0) udp(r *rawHeaders, path string) (*UDP, error) {
	u := &UDP{}
	defDst := Fix(9)
	switch {
	case r.VXLAN != nil:
		defDst = Fix(PortVXLAN)
	case r.Geneve != nil:
		defDst = Fix(PortGeneve)
	}
	var err error
	if u.Src, err = p.opt(r.UDP.Src, path+".udp.src", tPort, Fix(1024)); err != nil {
		return nil, err
	}
	if u.Dst, err = p.opt(r.UDP.Dst, path+".udp.dst", tPort, defDst); err != nil {
		return nil, err
	}
	// A UDP tunnel over IPv4 sends no outer UDP checksum by default
	// (RFC 7348 §5, RFC 8926 §3.4, as Linux does); over IPv6 it is
	// computed over the whole inner frame.
	def := ChecksumRight
	if (r.VXLAN != nil || r.Geneve != nil) && r.IPv4 != nil {
		def = ChecksumZero
	}
	if u.Checksum, err = p.checksum(r.UDP.Checksum, path+".udp.checksum", true, def); err != nil {
		return nil, err
	}
	if u.Checksum == ChecksumZero && r.IPv6 != nil {
		return nil, p.errAt(r.UDP.Checksum.n, path+".udp.checksum", "UDP over IPv6 must carry a checksum (RFC 8200 §8.1)", "use checksum: right or bad")
	}
	return u, nil
}

// tunnel decodes a tunnel and its inner stack into h.Tunnel.
func (p *parser0) tunnel(r *rawHeaders, path string, h *Headers) (err error) {
	switch {
	case r.GRE != nil:
		h.Tunnel, err = p.gre(r.GRE, path+".gre")
	case r.VXLAN != nil, r.Geneve != nil:
		x, kind := r.VXLAN, TunnelVXLAN
		if x == nil {
			x, kind = r.Geneve, TunnelGeneve
		}
		tp := path + "." + kind
		t := &Tunnel{Kind: kind, Ethernet: true}
		if t.VNI, err = p.opt(x.VNI, tp+".vni", tVNI, Fix(1)); err != nil {
			return err
		}
		inner := x.Inner
		if inner == nil {
			inner = &rawHeaders{}
		}
		if err := p.headers(inner, tp+".inner", &t.Inner, kind); err != nil {
			return err
		}
		h.Tunnel = t
	}
	return err
}

// gre decodes a GRE tunnel (its key, sequence number and checksum) and
// its inner stack; gp is its YAML path.
func (p *parser0) gre(g *rawGRE, gp string) (*Tunnel, error) {
	t := &Tunnel{Kind: TunnelGRE}
	if g.Key.set() {
		v, err := p.opt(g.Key, gp+".key", tU32, Fix(0))
		if err != nil {
			return nil, err
		}
		t.Key = &v
	}
	if g.Seq.set() {
		v, err := p.opt(g.Seq, gp+".seq", tU32, Fix(0))
		if err != nil {
			return nil, err
		}
		t.Seq = &v
	}
	if g.Checksum.set() {
		s, err := p.text(g.Checksum, gp+".checksum", "true, false or bad")
		if err != nil {
			return nil, err
		}
		switch s {
		case "true", "right":
			t.Checksum = true
		case "false":
		case "bad":
			t.Checksum, t.ChecksumMode = true, ChecksumBad
		default:
			return nil, p.errAt(g.Checksum.n, gp+".checksum", fmt.Sprintf("%q is not a GRE checksum setting", s), "write checksum: true (computed), bad (computed, then made wrong) or false (no checksum field)")
		}
	}
	if g.Inner == nil {
		return nil, p.keyErr(gp+".inner", "gre needs an inner stack", "write inner: {ipv4: {}, udp: {}} (or start it with ethernet: {} to carry Ethernet)")
	}
	t.Ethernet = g.Inner.Ethernet != nil
	if err := p.headers(g.Inner, gp+".inner", &t.Inner, TunnelGRE); err != nil {
		return nil, err
	}
	return t, nil
}

// layerRank orders the layer names a raw layer may follow.
var layerRank = map[string]int{"ethernet": 0, "vlan": 1, "qinq": 1, "mpls": 2, "ipv4": 3, "ipv6": 3, "arp": 3, "udp": 4, "tcp": 4, "icmp": 4, "icmpv6": 4, "gre": 5, "vxlan": 5, "geneve": 5}

func (p *parser0) raws(r *rawHeaders, path string, h *Headers, hasEth bool) error {
	if len(r.Raw) == 0 {
		return nil
	}
	present := map[string]bool{"ethernet": hasEth, "vlan": r.VLAN != nil, "qinq": r.QinQ != nil, "mpls": len(r.MPLS) > 0,
		"ipv4": r.IPv4 != nil, "ipv6": r.IPv6 != nil, "arp": r.ARP != nil, "udp": r.UDP != nil, "tcp": r.TCP != nil,
		"icmp": r.ICMP != nil, "icmpv6": r.ICMPv6 != nil, "gre": r.GRE != nil, "vxlan": r.VXLAN != nil, "geneve": r.Geneve != nil}
	var names []string
	last := -1
	for k, ok := range present {
		if ok {
			names = append(names, k)
			last = max(last, layerRank[k])
		}
	}
	slices.SortFunc(names, func(a, b string) int { return layerRank[a] - layerRank[b] })
	for i, rr := range r.Raw {
		rp := fmt.Sprintf("%s.raw[%d]", path, i)
		if !rr.After.set() || !rr.Hex.set() {
			return p.keyErr(rp, "a raw layer needs after and hex", `write raw: [{after: ipv4, hex: "deadbeef"}]`)
		}
		after, err := p.text(rr.After, rp+".after", "a layer name")
		if err != nil {
			return err
		}
		if !present[after] {
			msg := fmt.Sprintf("after: %s names no layer of this stack", after)
			if _, known := layerRank[after]; !known {
				msg = fmt.Sprintf("after: %q is not a layer name", after)
			}
			return p.errAt(rr.After.n, rp+".after", msg, "name one of its layers: "+strings.Join(names, ", "))
		}
		if after == "qinq" {
			after = "vlan"
		}
		s, err := p.text(rr.Hex, rp+".hex", "hex bytes")
		if err != nil {
			return err
		}
		b, err := hex.DecodeString(strings.NewReplacer(" ", "", ":", "", "0x", "").Replace(s))
		if err != nil || len(b) == 0 {
			return p.errAt(rr.Hex.n, rp+".hex", fmt.Sprintf("%q is not hex bytes", s), `write hex bytes, e.g. hex: "0800deadbeef"`)
		}
		if len(b) > MaxFrameSize {
			return p.errAt(rr.Hex.n, rp+".hex", fmt.Sprintf("%d raw bytes exceed the largest frame, %d", len(b), MaxFrameSize), "shorten it")
		}
		if len(b)%2 == 1 && (layerRank[after] < last || h.Tunnel != nil) {
			return p.errAt(rr.Hex.n, rp+".hex", fmt.Sprintf("%d raw bytes (an odd number) before more headers would put them at odd offsets", len(b)), "add a byte (e.g. 00) to make the length even; only the last raw layer of a frame may be odd")
		}
		x := Raw{After: after, Bytes: b}
		if rr.Type.set() {
			maxT := uint64(0xffff)
			switch after {
			case "ethernet", "vlan", "gre":
			case "ipv4", "ipv6":
				maxT = 255
			default:
				return p.errAt(rr.Type.n, rp+".type", fmt.Sprintf("%s has no next-protocol field for type to set", after), "use type only after ethernet, vlan, ipv4, ipv6 or gre")
			}
			t, err := p.optFixed(rr.Type, rp+".type", ftype{"type", fUint, maxT, "0x0800"}, 0)
			if err != nil {
				return err
			}
			if t == 0 {
				return p.errAt(rr.Type.n, rp+".type", "type 0 is not written", "give a non-zero type, or remove it to name the layer after the raw bytes")
			}
			x.Type = uint16(t)
		}
		h.Raw = append(h.Raw, x)
	}
	return nil
}

// checksum parses a checksum mode: right (also correct), bad, or, where
// zero is allowed (UDP), zero.
func (p *parser0) checksum(x node, path string, zero bool, def Checksum) (Checksum, error) {
	if !x.set() {
		return def, nil
	}
	what := "right or bad"
	if zero {
		what = "right, bad or zero"
	}
	s, err := p.text(x, path, what)
	if err != nil {
		return 0, err
	}
	switch s {
	case "right", "correct":
		return ChecksumRight, nil
	case "bad":
		return ChecksumBad, nil
	case "zero", "none":
		if zero {
			return ChecksumZero, nil
		}
	}
	return 0, p.errAt(x.n, path, fmt.Sprintf("unknown checksum mode %q", s), "use "+what+" (bad writes the right checksum with its lowest bit flipped)")
}

// tagFinder finds the first YAML tag (!foo, !!str) of a document.
type tagFinder struct{ tag *ast.TagNode }

func (f *tagFinder) Visit(n ast.Node) ast.Visitor {
	if f.tag != nil {
		return nil
	}
	if t, ok := n.(*ast.TagNode); ok {
		f.tag = t
		return nil
	}
	return f
}

// checkTags refuses YAML tags: a template takes plain values, and a tag
// on a list or mapping field trips the YAML decoder.
func (p *parser0) checkTags(root ast.Node) *Error {
	var f tagFinder
	ast.Walk(&f, root)
	if f.tag == nil {
		return nil
	}
	tk := f.tag.GetToken()
	return &Error{File: p.file, Line: tk.Position.Line, Col: tk.Position.Column, Path: pathAt(p.ast, "", tk.Position.Line, tk.Position.Column),
		Msg: fmt.Sprintf("YAML tag %q: templates take plain values", tk.Value), Remedy: "remove the tag (quote the value if it should be text)"}
}
