package netns

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// TestRouter: the router forwards between its links (its routes lead each
// port's subnet out of that link's end, forwarding is on for both
// families), the tester's namespace holds the ports and forwards nothing,
// a shaper sits on both egress ends, and Close removes everything.
func TestRouter(t *testing.T) {
	testbed.RequireRoot(t)
	testbed.RequireTool(t, "ip", "iproute2")
	testbed.RequireTool(t, "tc", "iproute2")
	ctx := context.Background()
	r, err := NewRouter(ctx, RouterOptions{Shape: &Shaper{Rate: 20_000_000}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	in := func(cmd *exec.Cmd) string {
		t.Helper()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v: %s", cmd.Args, err, out)
		}
		return string(out)
	}
	for _, c := range []struct{ dst, dev string }{
		{r.B.Addr4.Addr().String(), r.B.RouterEnd}, {r.A.Addr4.Addr().String(), r.A.RouterEnd},
		{r.B.Addr6.Addr().String(), r.B.RouterEnd}, {r.A.Addr6.Addr().String(), r.A.RouterEnd},
	} {
		if out := in(r.RouterCommand(ctx, "ip", "route", "get", c.dst)); !strings.Contains(out, "dev "+c.dev) {
			t.Errorf("route to %s: %s, want dev %s", c.dst, out, c.dev)
		}
	}
	for ns, want := range map[string]string{r.Name: "1", r.Ports: "0"} {
		out := in(exec.Command("ip", "netns", "exec", ns, "cat", "/proc/sys/net/ipv4/ip_forward"))
		if strings.TrimSpace(out) != want {
			t.Errorf("%s: ip_forward %q, want %s", ns, out, want)
		}
	}
	if out := in(r.RouterCommand(ctx, "cat", "/proc/sys/net/ipv6/conf/all/forwarding")); strings.TrimSpace(out) != "1" {
		t.Errorf("router: IPv6 forwarding %q", out)
	}
	for _, p := range []string{r.A.Port, r.B.Port} {
		if out := in(r.Command(ctx, "cat", "/sys/class/net/"+p+"/operstate")); strings.TrimSpace(out) != "up" {
			t.Errorf("port %s: operstate %q", p, out)
		}
		if out := in(r.Command(ctx, "cat", "/proc/sys/net/ipv6/conf/"+p+"/disable_ipv6")); strings.TrimSpace(out) != "1" {
			t.Errorf("port %s: IPv6 on (%q): its kernel would answer ND", p, out)
		}
	}
	for _, e := range []string{r.A.RouterEnd, r.B.RouterEnd} {
		if out := in(r.RouterCommand(ctx, "tc", "qdisc", "show", "dev", e)); !strings.Contains(out, "tbf") || !strings.Contains(out, "20Mbit") {
			t.Errorf("%s: %s, want a tbf of 20Mbit", e, out)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(r.Name) || exists(r.Ports) {
		t.Fatalf("namespaces left after Close: %s %s", r.Name, r.Ports)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
