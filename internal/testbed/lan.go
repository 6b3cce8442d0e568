package testbed

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"

	"github.com/wpg-dev/wpg/internal/sys"
)

// LAN is several throw-away hosts on one Ethernet segment: a network
// namespace per host, each with one interface (Iface, "lan0") and an
// address in 198.18.10.0/24, all plugged into a Linux bridge in a
// namespace of its own (the switch). It stands in for the machines of a
// fleet: processes in different hosts reach each other over the segment
// (TCP to the hosts' addresses), and frames a host sends to a MAC the
// bridge has not learnt reach every other host. Nothing of it is in the
// test's own namespace; t.Cleanup removes it all.
type LAN struct {
	// Switch is the bridge's namespace.
	Switch string
	Hosts  []Host
}

// Host is one namespace of a LAN.
type Host struct {
	// NS is the namespace's name (ip netns), Iface its interface on the
	// LAN, Addr the interface's address with the LAN's prefix.
	NS, Iface string
	Addr      netip.Prefix
}

var lanSeq atomic.Uint32

// NewLAN creates a LAN of n hosts (1 … 200), host i at 198.18.10.(i+1).
// IPv6 is off everywhere (no router solicitations or DAD frames in a
// receiver's counts). It needs root and the ip tool; without them it
// skips (fails under CI=true).
func NewLAN(t testing.TB, n int) *LAN {
	t.Helper()
	RequireRoot(t)
	RequireTool(t, "ip", "iproute2")
	if n < 1 || n > 200 {
		t.Fatalf("NewLAN: %d hosts: give 1 to 200", n)
	}
	id := fmt.Sprintf("%d%d", os.Getpid()%100000, lanSeq.Add(1))
	l := &LAN{Switch: "wpgtest-" + id + "-sw"}
	add := func(ns string) {
		if err := ip("netns", "add", ns); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := ip("netns", "del", ns); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		})
		for _, args := range [][]string{
			{"netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"},
			{"netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"},
			{"-n", ns, "link", "set", "lo", "up"},
		} {
			if err := ip(args...); err != nil {
				t.Fatal(err)
			}
		}
	}
	add(l.Switch)
	for _, args := range [][]string{
		{"-n", l.Switch, "link", "add", "br0", "type", "bridge"},
		{"-n", l.Switch, "link", "set", "br0", "up"},
	} {
		if err := ip(args...); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		h := Host{NS: fmt.Sprintf("wpgtest-%s-h%d", id, i), Iface: "lan0",
			Addr: netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 18, 10, byte(i + 1)}), 24)}
		add(h.NS)
		port := fmt.Sprintf("p%d", i)
		for _, args := range [][]string{
			{"-n", l.Switch, "link", "add", port, "type", "veth", "peer", "name", h.Iface, "netns", h.NS},
			{"-n", l.Switch, "link", "set", port, "master", "br0"},
			{"-n", l.Switch, "link", "set", port, "up"},
			{"-n", h.NS, "addr", "add", h.Addr.String(), "dev", h.Iface},
			{"-n", h.NS, "link", "set", h.Iface, "up"},
		} {
			if err := ip(args...); err != nil {
				t.Fatal(err)
			}
		}
		l.Hosts = append(l.Hosts, h)
	}
	return l
}

// Command returns a command that runs name with args inside the host's
// namespace (ip netns exec).
func (h Host) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", h.NS, name}, args...)...)
}

// DialContext dials addr from inside the host's namespace (a socket made
// on a thread that joined it), for an HTTP client of a server that runs
// there (http.Transport.DialContext).
func (h Host) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	var derr error
	err := sys.RunInNetns("/run/netns/"+h.NS, func() error {
		var d net.Dialer
		c, derr = d.DialContext(ctx, network, addr)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, derr
}
