package testbed

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wpg-dev/wpg/internal/sys"
)

// Veth is a throw-away network namespace with a veth pair: Outer stays in
// the test's namespace, Inner lives in NS. Both ends and NS's loopback are
// up, IPv6 is off on both ends (no router solicitations or DAD frames in
// the counts), and t.Cleanup removes everything, also when the test fails.
type Veth struct {
	NS    string // namespace name (ip netns), /run/netns/NS
	Outer string // veth end in the test's namespace
	Inner string // veth end inside NS
}

var vethSeq atomic.Uint32

// NewVeth creates the namespace and the pair. It needs root (CAP_NET_ADMIN,
// CAP_SYS_ADMIN) and the ip tool; without them it skips (fails under
// CI=true). Options change the pair (Queues).
func NewVeth(t testing.TB, opts ...VethOption) *Veth {
	t.Helper()
	var c vethConfig
	for _, o := range opts {
		o(&c)
	}
	RequireRoot(t)
	RequireTool(t, "ip", "iproute2")
	n := vethSeq.Add(1)
	id := fmt.Sprintf("%d%d", os.Getpid()%100000, n)
	v := &Veth{NS: "wpgtest-" + id, Outer: "wpo" + id, Inner: "wpi" + id}
	if len(v.Outer) > 15 {
		t.Fatalf("interface name %s too long", v.Outer)
	}
	if err := ip("netns", "add", v.NS); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ip("netns", "del", v.NS); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	var queues []string
	if c.queues > 1 {
		q := fmt.Sprint(c.queues)
		queues = []string{"numtxqueues", q, "numrxqueues", q}
	}
	add := append(append([]string{"link", "add", v.Outer}, queues...), "type", "veth", "peer", "name", v.Inner)
	if err := ip(append(append(add, queues...), "netns", v.NS)...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Deleting one end deletes the pair; it is gone already when
		// the namespace went first.
		if _, err := os.Stat("/sys/class/net/" + v.Outer); err == nil {
			if err := ip("link", "del", v.Outer); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	_ = os.WriteFile("/proc/sys/net/ipv6/conf/"+v.Outer+"/disable_ipv6", []byte("1"), 0)
	for _, args := range [][]string{
		{"link", "set", v.Outer, "up"},
		{"-n", v.NS, "link", "set", "lo", "up"},
		{"netns", "exec", v.NS, "sysctl", "-qw", "net.ipv6.conf." + v.Inner + ".disable_ipv6=1"},
		{"-n", v.NS, "link", "set", v.Inner, "up"},
	} {
		if err := ip(args...); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

// VethOption changes the pair NewVeth creates.
type VethOption func(*vethConfig)

type vethConfig struct {
	queues int
}

// Queues gives both ends n TX and n RX queues (numtxqueues/numrxqueues;
// the default is one of each), for backends that bind one socket per queue.
func Queues(n int) VethOption { return func(c *vethConfig) { c.queues = n } }

func ip(args ...string) error {
	var out bytes.Buffer
	cmd := exec.Command("ip", args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out.Bytes()))
	}
	return nil
}

// Command returns a command that runs name with args inside the
// namespace (ip netns exec).
func (v *Veth) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", v.NS, name}, args...)...)
}

// Do runs f on a locked OS thread inside the namespace; sockets f opens
// stay there after it returns. The thread is never handed back to the
// scheduler in the foreign namespace.
func (v *Veth) Do(f func() error) error {
	return sys.RunInNetns("/run/netns/"+v.NS, f)
}

// SetMTU sets the MTU of both ends.
func (v *Veth) SetMTU(t testing.TB, mtu int) {
	t.Helper()
	m := fmt.Sprint(mtu)
	if err := ip("link", "set", v.Outer, "mtu", m); err != nil {
		t.Fatal(err)
	}
	if err := ip("-n", v.NS, "link", "set", v.Inner, "mtu", m); err != nil {
		t.Fatal(err)
	}
}
