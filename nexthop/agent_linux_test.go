package nexthop

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/bpf"

	"github.com/wpg-dev/wpg/header"
	"github.com/wpg-dev/wpg/internal/netns"
	"github.com/wpg-dev/wpg/internal/testbed"
)

func newRouter(t *testing.T) *netns.Router {
	t.Helper()
	testbed.RequireRoot(t)
	testbed.RequireTool(t, "ip", "iproute2")
	r, err := netns.NewRouter(context.Background(), netns.RouterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// routerMAC is the MAC of the router's end of a link.
func routerMAC(t *testing.T, r *netns.Router, end string) string {
	t.Helper()
	out, err := r.RouterCommand(context.Background(), "cat", "/sys/class/net/"+end+"/address").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// The agent of a port resolves the router's MAC on its link, over ARP and
// over Neighbor Discovery, and answers the router's requests for the
// port's address (the router's neighbour table learns the port's MAC),
// though the port's kernel holds no address.
func TestAgentResolvesAndAnswers(t *testing.T) {
	r := newRouter(t)
	for _, c := range []struct {
		name string
		port Port
	}{
		{"ipv4", Port{Addr: r.A.Addr4, Gateway: r.A.Gateway4}},
		{"ipv6", Port{Addr: r.A.Addr6, Gateway: r.A.Gateway6}},
	} {
		t.Run(c.name, func(t *testing.T) { resolveAndAnswer(t, r, r.A.Port, r.A.RouterEnd, c.port, nil) })
	}
}

// resolveAndAnswer opens the agent of port on iface (tagged tags) and
// checks that it resolves the router's MAC on its end routerEnd and that
// the router learns the port's MAC from its answer.
func resolveAndAnswer(t *testing.T, r *netns.Router, iface, routerEnd string, port Port, tags []Tag) {
	t.Helper()
	ctx := context.Background()
	var a *Agent
	if err := r.Do(func() (err error) { a, err = Open(iface, port, Options{Tags: tags}); return err }); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if !a.Answering() {
		t.Fatal("the agent leaves answering to the kernel, which holds no address here")
	}
	mac, err := a.Resolve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := routerMAC(t, r, routerEnd); mac.String() != want {
		t.Fatalf("resolved %s, the router's end is %s", mac, want)
	}
	// The router learned the port's MAC from the request; forgotten,
	// it asks for the port's address to send a datagram there
	// (bash's /dev/udp; only the neighbour entry counts).
	if out, err := r.RouterCommand(ctx, "ip", "neigh", "flush", "dev", routerEnd).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	_ = r.RouterCommand(ctx, "bash", "-c", "echo x > /dev/udp/"+port.Addr.Addr().String()+"/9").Run()
	var out []byte
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if out, err = r.RouterCommand(ctx, "ip", "neigh", "show", port.Addr.Addr().String()).Output(); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), "lladdr") {
			break
		}
	}
	if !strings.Contains(string(out), a.MAC().String()) || strings.Contains(string(out), "FAILED") {
		t.Fatalf("router's neighbour entry for %s: %q, want %s", port.Addr.Addr(), out, a.MAC())
	}
	if a.Answered() == 0 {
		t.Fatal("the agent counts no answer")
	}
}

// On a trunk, the agent of a port whose frames carry a VLAN tag (one
// 802.1Q tag, or QinQ) resolves the router's VLAN subinterface with
// tagged requests and answers the router's tagged requests, over ARP and
// Neighbor Discovery.
func TestAgentTagged(t *testing.T) {
	for _, c := range []struct {
		name  string
		outer int
		tags  []Tag
	}{
		{"vlan", 0, []Tag{{TPID: header.EtherTypeVLAN, ID: 100}}},
		{"qinq", 10, []Tag{{TPID: header.EtherTypeQinQ, ID: 10}, {TPID: header.EtherTypeVLAN, ID: 100}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRouter(t)
			a, _, err := r.AddVLAN(context.Background(), c.outer, 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []Port{{Addr: a.Addr4, Gateway: a.Gateway4}, {Addr: a.Addr6, Gateway: a.Gateway6}} {
				t.Run(p.Proto(), func(t *testing.T) { resolveAndAnswer(t, r, a.Port, a.RouterEnd, p, c.tags) })
			}
		})
	}
}

// A gateway that never answers is a *NoAnswerError after the timeout,
// naming the port, the address and what to check.
func TestAgentNoAnswer(t *testing.T) {
	r := newRouter(t)
	p, err := ParsePort(r.A.Addr4.String(), "198.18.0.99")
	if err != nil {
		t.Fatal(err)
	}
	var a *Agent
	if err := r.Do(func() (err error) { a, err = Open(r.A.Port, p, Options{Timeout: 500 * time.Millisecond}); return err }); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	start := time.Now()
	_, err = a.Resolve(context.Background())
	var na *NoAnswerError
	if !errors.As(err, &na) || !strings.Contains(err.Error(), r.A.Port) || !strings.Contains(err.Error(), "198.18.0.99") || !strings.Contains(err.Error(), "check") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d < 400*time.Millisecond || d > 5*time.Second {
		t.Fatalf("gave up after %s, want about the 500ms timeout", d)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// An address the kernel holds on the interface is the kernel's to answer.
func TestAgentLeavesTheKernelsAddress(t *testing.T) {
	testbed.RequireRoot(t)
	v := testbed.NewVeth(t)
	if out, err := v.Command(context.Background(), "ip", "addr", "add", "198.18.9.1/24", "dev", v.Inner).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	p, _ := ParsePort("198.18.9.1/24", "")
	var a *Agent
	if err := v.Do(func() (err error) { a, err = Open(v.Inner, p, Options{}); return err }); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Answering() {
		t.Fatal("the agent answers for an address the kernel holds")
	}
	if _, err := a.Resolve(context.Background()); err == nil {
		t.Fatal("resolved a gateway the port does not have")
	}
}

// The socket filter of an IPv6 agent passes Neighbor Solicitations and
// Advertisements and drops the port's other IPv6 frames: another ICMPv6
// message, and a packet that is not ICMPv6.
func TestNDFilter(t *testing.T) {
	vm, err := bpf.NewVM(ndFilter)
	if err != nil {
		t.Fatal(err)
	}
	me, gw := netip.MustParseAddr("2001:2::1"), netip.MustParseAddr("2001:2::fe")
	ns, err := solicit(nil, macA, me, gw)
	if err != nil {
		t.Fatal(err)
	}
	na, err := advertise(nil, macA, me, message{Sender: gw, MAC: macR, From: macR})
	if err != nil {
		t.Fatal(err)
	}
	echo := slices.Clone(ns)
	header.ICMP(echo[header.EthernetLen+header.IPv6Len:]).SetTypeCode(header.ICMPv6EchoRequest, 0)
	udp := slices.Clone(ns)
	header.IPv6(udp[header.EthernetLen:]).SetNextHeader(header.ProtoUDP)
	for _, c := range []struct {
		name string
		f    []byte
		pass bool
	}{{"solicitation", ns, true}, {"advertisement", na, true}, {"echo request", echo, false}, {"UDP", udp, false}} {
		n, err := vm.Run(c.f)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if (n > 0) != c.pass {
			t.Errorf("%s: the filter keeps %d bytes, want it passed: %v", c.name, n, c.pass)
		}
	}
}
