package job

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/printable"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/nexthop"
	"github.com/wpg-dev/wpg/template"
)

// A port pair (Spec.RxInterface): the run sends on one port and receives
// on another in the same process, on the same clock, with a device
// under test between them (docs/device.md). This file validates it; the
// run's side is pair_run.go.

// pairPlan is a validated port pair.
type pairPlan struct {
	rxReg  backend.Registration
	tx, rx portPlan
	// reverse is the B→A run of a bidirectional pair (Spec.Bidir), nil
	// for one direction; base is its streams' first signature id.
	reverse *prepared
	base    uint16
}

// portPlan is one port: its interface, network namespace (a path; ""
// the caller's) and layer-3 identity (nil: none, MACs as the template
// says).
type portPlan struct {
	iface, netns string
	port         *nexthop.Port
	// source says where the address came from (flag field, template, site).
	source string
	// tags are the VLAN tags of the frames that leave the port (none:
	// untagged): its agent asks and answers with them.
	tags []nexthop.Tag
}

// netnsPath is the file of a network namespace given by name (ip netns:
// /run/netns/NAME) or as a path; "" stays "" (the caller's).
func netnsPath(ns string) string {
	if ns == "" || strings.ContainsRune(ns, '/') {
		return ns
	}
	return filepath.Join("/run/netns", ns)
}

// inNetns runs f on a thread in the namespace at path ("" here).
func inNetns(path string, f func() error) error {
	if path == "" {
		return f()
	}
	return sys.RunInNetns(path, f)
}

// checkNetns adds a problem when the namespace given in field does not
// exist.
func checkNetns(p *problems, field, ns string) {
	if ns == "" {
		return
	}
	if _, err := os.Stat(netnsPath(ns)); err != nil {
		p.add(field, ns, fmt.Sprintf("is not a network namespace (%s: %v)", netnsPath(ns), pathErr(err)), "give the name `ip netns list` shows, or a namespace file such as /proc/PID/ns/net")
	}
}

// pathErr is an os error without its repeated path.
func pathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// checkPair checks the port-pair fields of s on their own (the template's
// ports and the mirror come later, planPair): what applies only to a pair,
// the receiving backend, the two ports apart, the addresses.
func checkPair(p *problems, s Spec, reg backend.Registration) {
	sends := reg.Kind == backend.KindNetwork && reg.Name != "pcapfile"
	if s.Netns != "" && !sends {
		p.add("netns", s.Netns, fmt.Sprintf("is where a network port is, and backend %s has none", reg.Name), "drop {netns}, or send on a network interface ({interface} IFACE)")
	}
	checkNetns(p, "netns", s.Netns)
	if (s.SrcIP != "" || s.Gateway != "") && !sends {
		field := "src_ip"
		if s.SrcIP == "" {
			field = "gateway"
		}
		p.add(field, "", fmt.Sprintf("gives a network port an address, and backend %s sends on none", reg.Name), "drop it, or send on a network interface ({interface} IFACE)")
	}
	if s.Gateway != "" && s.SrcIP == "" {
		p.add("gateway", s.Gateway, "needs the port's own address: the gateway is resolved from it, on its link", "add {src_ip} with the port's address and the link's prefix, e.g. {src_ip} 198.18.0.1/24")
	}
	if s.RxInterface == "" {
		for _, f := range []string{"rx_backend", "rx_netns", "rx_src_ip", "rx_gateway", "bidir"} {
			if given(s, f) {
				p.add(f, "", "applies to a port pair, and no receiving port is given", "add {rx_interface} PORT (the device's other port), or drop {"+f+"}")
			}
		}
	} else {
		if !sends {
			p.add("rx_interface", s.RxInterface, fmt.Sprintf("receives what a network port sends, and backend %s sends on none", reg.Name), "send on a network interface ({interface} IFACE), or drop {rx_interface}")
		}
		checkNetns(p, "rx_netns", s.RxNetns)
		if s.RxInterface == s.Interface && sameNetns(s.Netns, s.RxNetns) {
			p.add("rx_interface", s.RxInterface, "is the sending port: a receiver never counts the frames this host sends on a port, so every frame would be lost",
				"receive on the device's other port (or the far end of the cable): {rx_interface} PORT_B, with {rx_netns} NS where it is in another namespace")
		}
		if s.RxGateway != "" && s.RxSrcIP == "" {
			p.add("rx_gateway", s.RxGateway, "needs the receiving port's own address: the gateway is resolved from it, on its link", "add {rx_src_ip} with the port's address and the link's prefix, e.g. {rx_src_ip} 198.19.0.1/24")
		}
		name := s.RxBackend
		if name == "" {
			name = "afpacket"
		}
		rx, err := backend.Lookup(name)
		switch {
		case err != nil:
			p.wrap("rx_backend", s.RxBackend, err, "choose one of "+joinNames(backendsReceivingOnPorts()))
		case !rx.Receives || rx.Kind != backend.KindNetwork:
			p.add("rx_backend", s.RxBackend, "does not receive on a network port", "choose one of "+joinNames(backendsReceivingOnPorts()))
		}
	}
	for _, f := range []struct{ addr, gw, addrField, gwField string }{
		{s.SrcIP, s.Gateway, "src_ip", "gateway"}, {s.RxSrcIP, s.RxGateway, "rx_src_ip", "rx_gateway"},
	} {
		if f.addr == "" {
			continue
		}
		if _, err := nexthop.ParsePort(f.addr, f.gw); err != nil {
			field, value := f.addrField, f.addr
			if pe, ok := err.(*nexthop.PortError); ok && pe.Field == nexthop.FieldGateway {
				field, value = f.gwField, f.gw
			}
			p.wrap(field, value, err, "give the port's address with the link's prefix and a gateway on that link")
		}
	}
}

// sameNetns reports whether two namespace fields name the same namespace.
func sameNetns(a, b string) bool {
	a, b = netnsPath(a), netnsPath(b)
	if a == b {
		return true
	}
	ai, aerr := os.Stat(nsOrSelf(a))
	bi, berr := os.Stat(nsOrSelf(b))
	return aerr == nil && berr == nil && os.SameFile(ai, bi)
}

// nsOrSelf is path, or the caller's namespace for "".
func nsOrSelf(path string) string {
	if path == "" {
		return "/proc/self/ns/net"
	}
	return path
}

// backendsReceivingOnPorts lists the backends that receive on a network
// interface: the ones a port pair's receiving port may use.
func backendsReceivingOnPorts() []string {
	var names []string
	for _, r := range backend.All() {
		if r.Receives && r.Kind == backend.KindNetwork {
			names = append(names, r.Name)
		}
	}
	return names
}

// portOf is a port's effective address: the spec's fields (a flag, an
// API field) first, then the template's ports:, then the site's
// (wpg.toml [port]); nil without any.
func portOf(specAddr, specGW string, tpl *nexthop.Port, siteAddr, siteGW string) (*nexthop.Port, string, error) {
	switch {
	case specAddr != "":
		p, err := nexthop.ParsePort(specAddr, specGW)
		return &p, "spec", err
	case tpl != nil:
		return tpl, "template", nil
	case siteAddr != "":
		p, err := nexthop.ParsePort(siteAddr, siteGW)
		return &p, "wpg.toml", err
	}
	return nil, "", nil
}

// planPair finishes a pair's plan once the frames are known: the ports'
// addresses (spec, template, site), that the streams' family is the
// ports', and for --bidir the mirrored streams and the reverse run.
func planPair(p *problems, pr *prepared, env Env) {
	s := pr.spec
	tplPorts := &template.Ports{}
	if sp := pr.frames.spec; sp != nil && sp.Ports != nil {
		tplPorts = sp.Ports
	}
	pl := &pairPlan{tx: portPlan{iface: s.Interface, netns: netnsPath(s.Netns)}}
	var err error
	if s.Interface != "" {
		if pl.tx.port, pl.tx.source, err = portOf(s.SrcIP, s.Gateway, tplPorts.TX, s.Limits.SrcIP, s.Limits.Gateway); err != nil {
			p.wrap("src_ip", s.Limits.SrcIP, err, "correct [port] src_ip and gateway in wpg.toml")
			return
		}
		if sp := pr.frames.spec; sp != nil && pl.tx.port != nil {
			planTags(p, "interface", &pl.tx, sp.Streams)
		}
	}
	if s.RxInterface == "" {
		if pl.tx.port != nil {
			pr.pair = pl // a port of its own, without a receiving one
			checkFamily(p, "src_ip", pl.tx, pr.frames.spec)
		}
		return
	}
	name := s.RxBackend
	if name == "" {
		name = "afpacket"
	}
	pl.rxReg, _ = backend.Lookup(name) // checked by checkPair
	pl.rx = portPlan{iface: s.RxInterface, netns: netnsPath(s.RxNetns)}
	if pl.rx.port, pl.rx.source, err = portOf(s.RxSrcIP, s.RxGateway, tplPorts.RX, s.Limits.RxSrcIP, s.Limits.RxGateway); err != nil {
		p.wrap("rx_src_ip", s.Limits.RxSrcIP, err, "correct [port] rx_src_ip and rx_gateway in wpg.toml")
		return
	}
	pr.pair = pl
	checkFamily(p, "src_ip", pl.tx, pr.frames.spec)
	if sp := pr.frames.spec; sp != nil && pl.rx.port != nil {
		// B's frames are the reverse streams, or the forward ones mirrored
		// (their tags as they are).
		back := sp.Streams
		if len(sp.Reverse) > 0 {
			back = sp.Reverse
		}
		planTags(p, "rx_interface", &pl.rx, back)
	}
	if !s.Bidir {
		return
	}
	spec := pr.frames.spec
	if spec == nil {
		p.add("bidir", "", "mirrors packet streams, and this run sends payload frames", "drop {bidir}")
		return
	}
	m, err := template.Mirror(spec)
	if err != nil {
		p.wrap("bidir", "", err, "give the reverse streams under reverse: in the template, or drop {bidir}")
		return
	}
	if len(spec.Reverse) == 0 && pl.tx.port != nil && pl.tx.port.Gateway.IsValid() && (pl.rx.port == nil || !pl.rx.port.Gateway.IsValid()) {
		// The mirror's frames leave B for A's address: through a router
		// only with B's own next hop as their destination.
		from, also := "{gateway}", ""
		if pl.tx.source == "template" {
			from, also = "the template's ports.tx", " (or an rx: entry with src_ip and gateway under the template's ports:)"
		}
		p.add("bidir", "", "sends B→A through the device, and port A has a gateway ("+from+") while B has none: the mirrored frames would reach no router",
			"add {rx_gateway} IP, the device's address on B's link (e.g. {rx_gateway} 198.19.0.254), with {rx_src_ip}"+also+"; or give the reverse streams under reverse: in the template")
		return
	}
	if len(spec.Streams)+len(m.Streams) > 1<<16 {
		p.add("bidir", "", fmt.Sprintf("needs a signature id for each of %d streams and their %d mirrors; there are 65536", len(spec.Streams), len(m.Streams)), "send fewer streams, or one way")
		return
	}
	checkFamily(p, "rx_src_ip", pl.rx, m)
	if len(p.list) > 0 {
		return
	}
	rs := s
	rs.Interface, rs.Netns, rs.SrcIP, rs.Gateway = s.RxInterface, s.RxNetns, s.RxSrcIP, s.RxGateway
	rs.RxInterface, rs.RxNetns, rs.RxSrcIP, rs.RxGateway = s.Interface, s.Netns, s.SrcIP, s.Gateway
	rs.Bidir = false
	rs.Limits.SrcIP, rs.Limits.Gateway, rs.Limits.RxSrcIP, rs.Limits.RxGateway = s.Limits.RxSrcIP, s.Limits.RxGateway, s.Limits.SrcIP, s.Limits.Gateway
	if rs.Backend == "" {
		rs.Backend = pr.reg.Name
	}
	pl.base = uint16(len(spec.Streams))
	rev, err := prepareDir(rs, env, &direction{spec: m, base: pl.base})
	if err != nil {
		for _, e := range AsProblems(err) {
			e.Reason = "(B→A) " + e.Reason
			p.list = append(p.list, e)
		}
		if len(AsProblems(err)) == 0 {
			p.wrap("bidir", "", err, "correct the reverse direction")
		}
		return
	}
	rev.pair = nil // the forward run holds both ports
	pl.reverse = rev
}

// checkFamily adds a problem when a stream of spec is of the other IP
// family than port (nil: nothing to check): its next hop would be one of
// the wrong family. The problem is the template's where the template's
// ports: gave the address, limits.src_ip (limits.rx_src_ip) where the
// site's Limits did.
func checkFamily(p *problems, field string, plan portPlan, spec *template.Spec) {
	port := plan.port
	if port == nil || spec == nil {
		return
	}
	for i := range spec.Streams {
		st := &spec.Streams[i]
		v4, v6 := st.IPv4 != nil, st.IPv6 != nil
		if (v4 && !port.Is4()) || (v6 && port.Is4()) {
			fam, pfam := "IPv4", "IPv6"
			if v6 {
				fam, pfam = pfam, fam
			}
			why := fmt.Sprintf("is %s, and stream %d (%s) is %s: its gateway would be of the wrong family", pfam, i, printable.Escape(st.Name), fam)
			fix := fmt.Sprintf("give the port an %s address and gateway, or send %s streams", fam, pfam)
			if plan.source == "template" {
				// Named where it was written, not as a flag never given.
				key := "ports.tx"
				if field == "rx_src_ip" {
					key = "ports.rx"
				}
				p.add("template", "", fmt.Sprintf("%s: %s.src_ip %s: %s", spec.File, key, port.Addr, why), fmt.Sprintf("give %s an %s src_ip and gateway, or send %s streams", key, fam, pfam))
				return
			}
			if plan.source == "wpg.toml" {
				// The site's address (Limits), not the spec's field.
				gw := "gateway"
				if field == "rx_src_ip" {
					gw = "rx_gateway"
				}
				p.add("limits."+field, port.Addr.String(), why, fmt.Sprintf("give [port] %s and %s in wpg.toml %s addresses, or send %s streams", field, gw, fam, pfam))
				return
			}
			p.add(field, port.Addr.String(), why, fix)
			return
		}
	}
}

// planTags sets plan's VLAN tags to those of streams, the frames that
// leave the port, or adds a problem about field (the port) when they
// differ or vary: a port asks for its gateway and answers for its
// address on one VLAN (docs/device.md).
func planTags(p *problems, field string, plan *portPlan, streams []template.Stream) {
	tags, err := streamTags(streams)
	if err != nil {
		p.add(field, plan.iface, err.Error(), "give the streams' destination MAC in the template (ethernet.dst) instead of a port address ({src_ip}, {gateway}), or send one VLAN per port")
		return
	}
	plan.tags = tags
}

// streamTags is the VLAN tag stack the streams carry, outer first (nil:
// untagged); an error when two streams carry different stacks, or a
// stream varies its VLAN id.
func streamTags(streams []template.Stream) ([]nexthop.Tag, error) {
	var tags []nexthop.Tag
	for i := range streams {
		st := &streams[i]
		var t []nexthop.Tag
		for j, v := range st.VLANs {
			if v.ID.Kind != template.Fixed {
				key := "vlan.id"
				if len(st.VLANs) == 2 {
					key = [2]string{"qinq.outer.id", "qinq.inner.id"}[j]
				}
				return nil, fmt.Errorf("stream %d (%s) varies its VLAN id (%s): the port resolves its gateway and answers for its address on one VLAN", i, printable.Escape(st.Name), key)
			}
			t = append(t, nexthop.Tag{TPID: v.TPID, ID: uint16(v.ID.From)})
		}
		if i == 0 {
			tags = t
			continue
		}
		if !slices.Equal(t, tags) {
			return nil, fmt.Errorf("the streams carry different VLAN tags: stream 0 (%s) %s, stream %d (%s) %s; the port resolves its gateway and answers for its address on one VLAN",
				printable.Escape(streams[0].Name), nexthop.FormatTags(tags), i, printable.Escape(st.Name), nexthop.FormatTags(t))
		}
	}
	return tags, nil
}

// direction is what a prepared run takes instead of its template: the
// streams of a port pair's reverse direction and their first signature id.
type direction struct {
	spec *template.Spec
	base uint16
}

// usePort fills the outer headers of spec's streams with a port's
// identity: the Ethernet source is the port's MAC, the destination the
// gateway's (when resolved), a fixed source address of the port's family
// the port's address (a varying one stays: flows on purpose).
func usePort(spec *template.Spec, mac, gw net.HardwareAddr, port *nexthop.Port) {
	if spec == nil {
		return
	}
	for i := range spec.Streams {
		st := &spec.Streams[i]
		st.Ethernet.Src = template.Fix(macValue(mac))
		if gw != nil {
			st.Ethernet.Dst = template.Fix(macValue(gw))
		}
		a := port.Addr.Addr()
		switch {
		case st.IPv4 != nil && a.Is4() && st.IPv4.Src.Kind == template.Fixed:
			x := *st.IPv4
			b := a.As4()
			x.Src = template.Fix(uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3]))
			st.IPv4 = &x
		case st.IPv6 != nil && a.Is6() && st.IPv6.Src.Lo.Kind == template.Fixed:
			x := *st.IPv6
			b := a.As16()
			var hi, lo uint64
			for j := range 8 {
				hi = hi<<8 | uint64(b[j])
				lo = lo<<8 | uint64(b[8+j])
			}
			x.Src = template.IPv6Addr{Hi: hi, Lo: template.Fix(lo)}
			st.IPv6 = &x
		}
	}
}

// macValue is a MAC as a template value (48 bits, big-endian).
func macValue(mac net.HardwareAddr) uint64 {
	var v uint64
	for _, b := range mac {
		v = v<<8 | uint64(b)
	}
	return v
}

// ResolvePort resolves a port's gateway as a run does: on interface
// iface in the namespace netns (a name or a path; "" the caller's), the
// port's address src (with the link's prefix) and gateway. It returns
// the interface's MAC and the gateway's. It asks with the VLAN tags of
// spec's streams (nil spec: untagged), as a run does. wpg preview shows a
// template's frames with them (FillPort).
func ResolvePort(ctx context.Context, iface, netns, src, gateway string, spec *template.Spec) (mac, gw net.HardwareAddr, err error) {
	port, err := nexthop.ParsePort(src, gateway)
	if err != nil {
		return nil, nil, err
	}
	var tags []nexthop.Tag
	if spec != nil {
		if tags, err = streamTags(spec.Streams); err != nil {
			return nil, nil, fmt.Errorf("port %s: %w; give the streams' destination MAC in the template (ethernet.dst) instead of a port address, or send one VLAN per port", iface, err)
		}
	}
	err = inNetns(netnsPath(netns), func() error {
		a, err := nexthop.Open(iface, port, nexthop.Options{Tags: tags})
		if err != nil {
			return err
		}
		defer a.Close()
		mac = a.MAC()
		if port.Gateway.IsValid() {
			gw, err = a.Resolve(ctx)
		}
		return err
	})
	return mac, gw, err
}

// FillPort fills spec's streams as a run with the port src (address and
// link prefix) fills them: the Ethernet source mac, the destination gw
// (nil: as written), a fixed source address of the port's family.
func FillPort(spec *template.Spec, mac, gw net.HardwareAddr, src string) error {
	port, err := nexthop.ParsePort(src, "")
	if err != nil {
		return err
	}
	usePort(spec, mac, gw, &port)
	return nil
}
