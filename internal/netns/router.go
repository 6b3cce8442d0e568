package netns

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/internal/vlanbpf"
)

// Router is a device to test against: a Linux router in a namespace of
// its own that forwards IPv4 and IPv6 between two links, A and B, and a
// second namespace, the tester's, that holds the other end of each link
// (the ports wpg sends and receives on). Both namespaces are named as
// New names them, so that CleanStale removes them after a killed wpg.
//
// The ports live in a namespace of their own rather than the caller's:
// frames the router forwards to a port carry that port's MAC, and a
// caller's namespace that forwards (the host's, often) would route them
// on, towards its default route. The ports' namespace forwards nothing,
// has no addresses, and IPv6 is off on its ends, so its kernel answers
// neither ARP nor Neighbor Discovery for the ports' addresses: the
// program testing the router does (package nexthop), as a traffic
// generator's ports do.
//
// Addresses (the benchmarking ranges, RFC 2544 and RFC 5180):
//
//	link A: port 198.18.0.1/24, 2001:2:0:a::1/64; router 198.18.0.254, 2001:2:0:a::fe
//	link B: port 198.19.0.1/24, 2001:2:0:b::1/64; router 198.19.0.254, 2001:2:0:b::fe
//
// so that wpg's default template (198.18.0.1 → 198.19.0.1) crosses it
// from A to B as it is.
type Router struct {
	// Name is the router's namespace, Ports the tester's.
	Name, Ports string
	// A and B are the two links.
	A, B Link
	// Shaped is the tbf shaper on the router's two egress ends, if any.
	Shaped *Shaper

	once sync.Once
	err  error
	// relays tag and untag the VLAN's frames where the kernel has no
	// VLAN interfaces (AddVLAN).
	relays []*vlanRelay
}

// Link is one link between the tester and the router.
type Link struct {
	// Port is the tester's end (in Router.Ports), RouterEnd the router's.
	Port, RouterEnd string
	// Addr4 and Addr6 are the port's addresses with the link's prefix
	// (what wpg's --src-ip takes), Gateway4 and Gateway6 the router's on
	// the link (--gateway).
	Addr4, Addr6       netip.Prefix
	Gateway4, Gateway6 netip.Addr
}

// Shaper is a tbf qdisc (tc-tbf(8)) on the router's egress ends.
type Shaper struct {
	// Rate is the shaped rate in bits per second (tbf counts each
	// packet's bytes from the Ethernet header on, without the FCS).
	Rate int64
	// Burst is the bucket size in bytes, Limit the bytes that may wait
	// in its queue; a frame over that is dropped. 0 each: a burst of
	// 10 ms at Rate (at least 16 KiB) and a queue of 20 ms (at least
	// 32 KiB).
	Burst, Limit int64
}

// RouterOptions tune NewRouter.
type RouterOptions struct {
	// MTU of the four ends (0: the kernel's default, 1500).
	MTU int
	// Shape, when not nil, puts a tbf shaper on both of the router's
	// egress ends (towards A and towards B).
	Shape *Shaper
}

// The test bed's addresses (see Router).
var (
	routerA = Link{Addr4: netip.MustParsePrefix("198.18.0.1/24"), Gateway4: netip.MustParseAddr("198.18.0.254"),
		Addr6: netip.MustParsePrefix("2001:2:0:a::1/64"), Gateway6: netip.MustParseAddr("2001:2:0:a::fe")}
	routerB = Link{Addr4: netip.MustParsePrefix("198.19.0.1/24"), Gateway4: netip.MustParseAddr("198.19.0.254"),
		Addr6: netip.MustParsePrefix("2001:2:0:b::1/64"), Gateway6: netip.MustParseAddr("2001:2:0:b::fe")}
)

// NewRouter creates the router and the tester's namespace. On any
// failure what was created is removed again before it returns. It needs
// root and the ip tool (and tc for Shape).
func NewRouter(ctx context.Context, o RouterOptions) (*Router, error) {
	if o.MTU < 0 || o.MTU > 65535 {
		return nil, fmt.Errorf("netns: MTU %d: give 68 to 65535, or 0 for the default", o.MTU)
	}
	sh, err := o.Shape.withDefaults()
	if err != nil {
		return nil, err
	}
	tools := []string{"ip"}
	if sh != nil {
		tools = append(tools, "tc")
	}
	for _, t := range tools {
		if _, err := exec.LookPath(t); err != nil {
			return nil, fmt.Errorf("netns: the %s tool (iproute2) is needed: %w", t, err)
		}
	}
	pid := os.Getpid()
	start, err := startTime(pid)
	if err != nil {
		return nil, fmt.Errorf("netns: %w", err)
	}
	n, m := seq.Add(1)%100, seq.Add(1)%100
	r := &Router{
		Name:   fmt.Sprintf("%s%d-%d-%d", Prefix, pid, start, n),
		Ports:  fmt.Sprintf("%s%d-%d-%d", Prefix, pid, start, m),
		A:      routerA,
		B:      routerB,
		Shaped: sh,
	}
	r.A.Port, r.A.RouterEnd = fmt.Sprintf("wpg%dx%da", pid, n), fmt.Sprintf("wpg%dx%dra", pid, n)
	r.B.Port, r.B.RouterEnd = fmt.Sprintf("wpg%dx%db", pid, n), fmt.Sprintf("wpg%dx%drb", pid, n)
	if err := ip(ctx, "netns", "add", r.Name); err != nil {
		if isPermission(err) {
			return nil, fmt.Errorf("netns: creating a network namespace needs root (CAP_SYS_ADMIN): %w", err)
		}
		return nil, err
	}
	if err := r.build(ctx, o.MTU); err != nil {
		if cerr := r.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return nil, err
	}
	return r, nil
}

// build does the rest of NewRouter once the router's namespace exists.
func (r *Router) build(ctx context.Context, mtu int) error {
	if err := ip(ctx, "netns", "add", r.Ports); err != nil {
		return err
	}
	rt := func(args ...string) []string { return append([]string{"-n", r.Name}, args...) }
	pt := func(args ...string) []string { return append([]string{"-n", r.Ports}, args...) }
	sysctl := func(ns, key, v string) []string {
		return []string{"netns", "exec", ns, "sysctl", "-qw", key + "=" + v}
	}
	steps := [][]string{
		// The ports' kernel stays out of the way: it forwards nothing, and
		// answers neither ARP (no addresses) nor ND (IPv6 off on its ends).
		sysctl(r.Ports, "net.ipv4.ip_forward", "0"),
		sysctl(r.Ports, "net.ipv6.conf.default.disable_ipv6", "1"),
		sysctl(r.Ports, "net.ipv6.conf.all.disable_ipv6", "1"),
		sysctl(r.Name, "net.ipv4.ip_forward", "1"),
		sysctl(r.Name, "net.ipv6.conf.all.forwarding", "1"),
		// The router's own addresses need no duplicate detection on a link
		// only the tester shares.
		sysctl(r.Name, "net.ipv6.conf.default.accept_dad", "0"),
		pt("link", "set", "lo", "up"),
		rt("link", "set", "lo", "up"),
	}
	for _, l := range []Link{r.A, r.B} {
		steps = append(steps, pt("link", "add", l.Port, "type", "veth", "peer", "name", l.RouterEnd, "netns", r.Name))
		if mtu > 0 {
			v := strconv.Itoa(mtu)
			steps = append(steps, pt("link", "set", l.Port, "mtu", v), rt("link", "set", l.RouterEnd, "mtu", v))
		}
		steps = append(steps,
			rt("addr", "add", netip.PrefixFrom(l.Gateway4, l.Addr4.Bits()).String(), "dev", l.RouterEnd),
			rt("addr", "add", netip.PrefixFrom(l.Gateway6, l.Addr6.Bits()).String(), "dev", l.RouterEnd, "nodad"),
			pt("link", "set", l.Port, "up"),
			rt("link", "set", l.RouterEnd, "up"),
		)
	}
	for _, args := range steps {
		if err := ip(ctx, args...); err != nil {
			return err
		}
	}
	// The kernel takes a link's carrier into account (operstate, and IPv6
	// on the router's ends, which ignores solicitations before) up to a
	// second after both ends came up: wait for it, so that the router
	// answers from the start.
	for _, w := range []struct{ ns, dev string }{{r.Name, r.A.RouterEnd}, {r.Name, r.B.RouterEnd}, {r.Ports, r.A.Port}, {r.Ports, r.B.Port}} {
		if err := waitUp(ctx, w.ns, w.dev); err != nil {
			return err
		}
	}
	if sh := r.Shaped; sh != nil {
		for _, l := range []Link{r.A, r.B} {
			cmd := exec.CommandContext(ctx, "ip", "netns", "exec", r.Name, "tc", "qdisc", "add", "dev", l.RouterEnd, "root", "tbf",
				"rate", strconv.FormatInt(sh.Rate, 10)+"bit", "burst", strconv.FormatInt(sh.Burst, 10), "limit", strconv.FormatInt(sh.Limit, 10))
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("tc qdisc add dev %s root tbf: %w: %s", l.RouterEnd, err, out)
			}
		}
	}
	return nil
}

// waitUp waits (up to 5 s) until dev in namespace ns is operationally up.
func waitUp(ctx context.Context, ns, dev string) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, err := exec.CommandContext(ctx, "ip", "netns", "exec", ns, "cat", "/sys/class/net/"+dev+"/operstate").Output()
		state := strings.TrimSpace(string(out))
		if err == nil && state == "up" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("netns: %s in %s is not up after 5 s (operstate %q, %v)", dev, ns, state, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// withDefaults checks a shaper and fills its zero fields; nil stays nil.
func (s *Shaper) withDefaults() (*Shaper, error) {
	if s == nil {
		return nil, nil
	}
	c := *s
	if c.Rate < 8000 {
		return nil, fmt.Errorf("netns: shaper rate %d bit/s: give 8000 or more", c.Rate)
	}
	if c.Burst < 0 || c.Limit < 0 {
		return nil, errors.New("netns: shaper burst and limit must not be negative")
	}
	if c.Burst == 0 {
		c.Burst = max(c.Rate/8/100, 16<<10)
	}
	if c.Limit == 0 {
		c.Limit = max(c.Rate/8/50, 32<<10)
	}
	return &c, nil
}

// PortsPath is the tester's namespace's file, for setns(2) (wpg's
// --netns takes it, or its name).
func (r *Router) PortsPath() string { return filepath.Join(runDir, r.Ports) }

// Path is the router's namespace's file.
func (r *Router) Path() string { return filepath.Join(runDir, r.Name) }

// Do runs f on a locked OS thread inside the tester's namespace, as
// NS.Do does.
func (r *Router) Do(f func() error) error { return sys.RunInNetns(r.PortsPath(), f) }

// Command runs name with args inside the tester's namespace.
func (r *Router) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", r.Ports, name}, args...)...)
}

// RouterCommand runs name with args inside the router's namespace (tc,
// nft, ip neigh: what a test changes on the device).
func (r *Router) RouterCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", r.Name, name}, args...)...)
}

// Close removes both namespaces, and with them the four veth ends. It is
// idempotent and takes no context, so that a cancelled run still cleans up.
func (r *Router) Close() error {
	r.once.Do(func() {
		ctx := context.Background()
		var errs []error
		for _, x := range r.relays {
			x.close()
		}
		for _, name := range []string{r.Ports, r.Name} {
			if _, err := os.Stat(filepath.Join(runDir, name)); err != nil {
				continue // never created
			}
			if err := ip(ctx, "netns", "del", name); err != nil {
				errs = append(errs, err)
			}
		}
		r.err = errors.Join(errs...)
	})
	return r.err
}

// The addresses of the links on the router's VLAN (Router.AddVLAN).
var (
	vlanA = Link{Addr4: netip.MustParsePrefix("198.18.1.1/24"), Gateway4: netip.MustParseAddr("198.18.1.254"),
		Addr6: netip.MustParsePrefix("2001:2:0:a1::1/64"), Gateway6: netip.MustParseAddr("2001:2:0:a1::fe")}
	vlanB = Link{Addr4: netip.MustParsePrefix("198.19.1.1/24"), Gateway4: netip.MustParseAddr("198.19.1.254"),
		Addr6: netip.MustParsePrefix("2001:2:0:b1::1/64"), Gateway6: netip.MustParseAddr("2001:2:0:b1::fe")}
)

// AddVLAN makes both links trunks: on the router's end of each it adds a
// VLAN subinterface, 802.1Q id (with outer above 0, inside an 802.1ad
// service tag outer: QinQ), that holds the router's addresses on that
// VLAN, and returns the links as the VLAN's frames see them (the same
// ports; RouterEnd the subinterface):
//
//	link A: port 198.18.1.1/24, 2001:2:0:a1::1/64; router 198.18.1.254, 2001:2:0:a1::fe
//	link B: port 198.19.1.1/24, 2001:2:0:b1::1/64; router 198.19.1.254, 2001:2:0:b1::fe
//
// The subinterface is the kernel's (ip link add … type vlan); a kernel
// built without 802.1Q (no 8021q) gets an equivalent: a veth pair in the
// router's namespace, one end holding the addresses, the other joined to
// the router's end of the link by a relay of this process that takes the
// VLAN's frames out of their tags and tags the subinterface's frames
// (until Close). The untagged links stay as they were. Call it once per
// router.
func (r *Router) AddVLAN(ctx context.Context, outer, id int) (a, b Link, err error) {
	if id < 1 || id > 4094 || outer < 0 || outer > 4094 {
		return a, b, fmt.Errorf("netns: VLAN %d (outer %d): give ids of 1 to 4094", id, outer)
	}
	a, b = vlanA, vlanB
	a.Port, b.Port = r.A.Port, r.B.Port
	a.RouterEnd, b.RouterEnd = "va", "vb"
	rt := func(args ...string) []string { return append([]string{"-n", r.Name}, args...) }
	kernel := true
	for _, l := range []struct {
		parent string
		link   *Link
	}{{r.A.RouterEnd, &a}, {r.B.RouterEnd, &b}} {
		name := l.link.RouterEnd
		var steps [][]string
		parent := l.parent
		if outer > 0 {
			steps = append(steps, rt("link", "add", "link", parent, "name", "s"+name, "type", "vlan", "proto", "802.1ad", "id", strconv.Itoa(outer)),
				rt("link", "set", "s"+name, "up"))
			parent = "s" + name
		}
		steps = append(steps, rt("link", "add", "link", parent, "name", name, "type", "vlan", "id", strconv.Itoa(id)))
		if kernel {
			if err := ip(ctx, steps[0]...); err != nil {
				if !strings.Contains(err.Error(), "Unknown device type") {
					return a, b, err
				}
				kernel = false
			} else {
				steps = steps[1:]
			}
		}
		if !kernel {
			// No 802.1Q in this kernel: a relay tags and untags.
			steps = [][]string{rt("link", "add", name, "type", "veth", "peer", "name", name+"t"), rt("link", "set", name+"t", "up")}
		}
		steps = append(steps,
			rt("addr", "add", netip.PrefixFrom(l.link.Gateway4, l.link.Addr4.Bits()).String(), "dev", name),
			rt("addr", "add", netip.PrefixFrom(l.link.Gateway6, l.link.Addr6.Bits()).String(), "dev", name, "nodad"),
			rt("link", "set", name, "up"))
		for _, args := range steps {
			if err := ip(ctx, args...); err != nil {
				return a, b, err
			}
		}
		if !kernel {
			var tags []vlanbpf.Tag
			if outer > 0 {
				tags = append(tags, vlanbpf.Tag{TPID: 0x88a8, ID: uint16(outer)})
			}
			tags = append(tags, vlanbpf.Tag{TPID: 0x8100, ID: uint16(id)})
			var x *vlanRelay
			if err := sys.RunInNetns(r.Path(), func() (err error) { x, err = newVLANRelay(l.parent, name+"t", tags); return err }); err != nil {
				return a, b, err
			}
			r.relays = append(r.relays, x)
		}
	}
	for _, dev := range []string{a.RouterEnd, b.RouterEnd} {
		if err := waitUp(ctx, r.Name, dev); err != nil {
			return a, b, err
		}
	}
	return a, b, nil
}
