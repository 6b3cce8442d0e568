package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/netns"
	"github.com/wpg-dev/wpg/internal/testbed"
)

// A port pair's run stopped by Ctrl-C still drains its receiver: the
// frames already on their way (here ~0.5 s of them queued in the
// router's shaper) arrive and are counted, so the verdict is pass, not
// "never arrived". The receiver used to stop with the sender, and the
// frames in the device's queue were judged lost (exit 3).
func TestDeviceInterruptDrainsReceiver(t *testing.T) {
	// The router forwards at 10 Mbit/s; 64-byte frames at 30 kpps are
	// 15.4 Mbit/s: the excess waits in a queue that holds 4 MiB (far
	// more than the run's excess), so nothing is dropped.
	r := newRouter(t, netns.RouterOptions{Shape: &netns.Shaper{Rate: 10_000_000, Burst: 32 << 10, Limit: 4 << 20}})
	cmd := exec.Command(testbed.Wpg(t), "send", "--netns", r.Ports, "-i", r.A.Port, "--src-ip", r.A.Addr4.String(), "--gateway", r.A.Gateway4.String(),
		"--rx-netns", r.Ports, "--rx-interface", r.B.Port, "--rx-src-ip", r.B.Addr4.String(),
		"--rate", "30kpps", "--duration", "30s", "--json")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	rep := decodePair(t, out.String())
	v := rep.Verification
	if code != 0 || rep.Frames == 0 || v.Frames != rep.Frames || v.Lost != 0 || len(rep.Directions) != 1 || rep.Directions[0].Verdict != "pass" {
		t.Fatalf("exit %d: sent %d, received %+v, directions %+v; want every frame sent received and pass\nstderr: %s", code, rep.Frames, v, rep.Directions, errb.String())
	}
	t.Logf("interrupted: %d sent, %d received", rep.Frames, v.Frames)
}

// --rx-interface naming a port of another namespace without --rx-netns
// is one line naming --rx-interface and --rx-netns: it said "receiving
// port b: afpacket: …; existing interfaces: … (-i IFACE)", pointing at
// the sending port's flag.
func TestDeviceRxInterfaceElsewhere(t *testing.T) {
	r := newRouter(t, netns.RouterOptions{})
	_, stderr, code := run(t, t.TempDir(), "send", "--netns", r.Ports, "-i", r.A.Port, "--rx-interface", r.B.Port, "--count", "10")
	want := "--rx-interface " + r.B.Port + ": no such network interface in this process's network namespace (existing: "
	if code == 0 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "with --rx-netns NS where it lies in another network namespace") ||
		strings.Contains(stderr, "-i IFACE") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("exit %d, %q; want one line with %q and --rx-netns", code, stderr, want)
	}
}

// --bidir through a router with a gateway for A and none for B is
// refused before anything is sent, naming --rx-gateway: B's mirrored
// frames went to no router, and wpg send judged B→A "never arrived",
// wpg ndr found "loss even at --min-rate" after a whole search.
func TestDeviceBidirWithoutRxGateway(t *testing.T) {
	r := newRouter(t, netns.RouterOptions{})
	ports := []string{"--netns", r.Ports, "-i", r.A.Port, "--src-ip", r.A.Addr4.String(), "--gateway", r.A.Gateway4.String(),
		"--rx-netns", r.Ports, "--rx-interface", r.B.Port, "--rx-src-ip", r.B.Addr4.String(), "--bidir"}
	for _, args := range [][]string{
		append([]string{"send", "--rate", "1kpps", "--count", "100"}, ports...),
	} {
		_, stderr, code := run(t, t.TempDir(), args...)
		if code != 2 || !strings.Contains(stderr, "--bidir sends B→A through the device, and port A has a gateway (--gateway) while B has none") ||
			!strings.Contains(stderr, "add --rx-gateway IP") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("wpg %s: exit %d, %q; want exit 2 naming --rx-gateway", args[0], code, stderr)
		}
	}
}

// wpg ndr's port options are told in its flags' words (exit 2) when the
// run refuses them: it said "trial at 20833 frames/s: sender on a:
// gateway 198.18.0.254: …; add src_ip …", the job's field names.
func TestNDRPortProblemsNameFlags(t *testing.T) {
	r := newRouter(t, netns.RouterOptions{})
	pair := []string{"ndr", "--sizes", "64", "--trial", "1s", "--max-rate", "1kpps", "--netns", r.Ports, "-i", r.A.Port, "--rx-netns", r.Ports, "--rx-interface", r.B.Port}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--gateway", r.A.Gateway4.String()}, "wpg: ndr: --gateway " + r.A.Gateway4.String() + ": needs the port's own address: the gateway is resolved from it, on its link; add --src-ip with the port's address"},
		{[]string{"--src-ip", r.A.Addr4.String(), "--gateway", r.A.Gateway4.String(), "--rx-src-ip", r.B.Addr4.String(), "--bidir"}, "wpg: ndr: --bidir sends B→A through the device, and port A has a gateway (--gateway) while B has none"},
	} {
		_, stderr, code := run(t, t.TempDir(), append(pair, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "src_ip") || strings.Contains(stderr, "rx_gateway") {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// A port address from the template's ports: of the other family than
// its streams is named where it was written (ports.rx.src_ip in the
// template), not as --rx-src-ip, a flag the user never gave.
func TestDeviceTemplatePortFamily(t *testing.T) {
	r := newRouter(t, netns.RouterOptions{})
	dir := t.TempDir()
	tpl := writeIn(t, dir, "pr.wpg.yaml", "ports:\n  tx: {src_ip: 198.18.0.1/24, gateway: 198.18.0.254}\n  rx: {src_ip: 198.19.0.1/24, gateway: 198.19.0.254}\n"+
		"streams:\n  - ipv4: {}\nreverse:\n  - ipv6: {}\n")
	_, stderr, code := run(t, dir, "send", tpl, "--netns", r.Ports, "-i", r.A.Port, "--rx-netns", r.Ports, "--rx-interface", r.B.Port, "--bidir", "--count", "10")
	want := "pr.wpg.yaml: ports.rx.src_ip 198.19.0.1/24: is IPv4, and stream 0 (reverse0) is IPv6"
	if code != 2 || !strings.Contains(stderr, want) || strings.Contains(stderr, "--rx-src-ip") {
		t.Fatalf("exit %d, %q; want exit 2 and %q", code, stderr, want)
	}
}

// Ctrl-C while wpg asks for a gateway that does not answer says where it
// stopped: it said "wpg: context canceled".
func TestDeviceInterruptWhileResolving(t *testing.T) {
	r := newRouter(t, netns.RouterOptions{})
	cmd := exec.Command(testbed.Wpg(t), "send", "--netns", r.Ports, "-i", r.A.Port, "--src-ip", r.A.Addr4.String(), "--gateway", "198.18.0.99", "--count", "10")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // inside the 3 s wpg asks for
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	want := "port " + r.A.Port + ": stopped while asking for gateway 198.18.0.99 (ARP)"
	if !strings.Contains(errb.String(), want) {
		t.Fatalf("stderr %q; want %q", errb.String(), want)
	}
}

// A port address from wpg.toml's [port] of the other family than its
// streams is named by its key and place (port.rx_src_ip (wpg.toml:2)),
// not as --rx-src-ip, a flag the user never gave.
func TestDeviceConfigPortFamily(t *testing.T) {
	r := newRouter(t, netns.RouterOptions{})
	dir := t.TempDir()
	cfg := writeIn(t, dir, "wpg.toml", "[port]\nrx_src_ip = \"198.19.0.1/24\"\nrx_gateway = \"198.19.0.254\"\n")
	tpl := writeIn(t, dir, "pr.wpg.yaml", "streams:\n  - ipv4: {}\nreverse:\n  - ipv6: {}\n")
	_, stderr, code := run(t, dir, "send", tpl, "--config", cfg, "--netns", r.Ports, "-i", r.A.Port, "--src-ip", "198.18.0.1/24", "--gateway", "198.18.0.254",
		"--rx-netns", r.Ports, "--rx-interface", r.B.Port, "--bidir", "--count", "10")
	want := "port.rx_src_ip (" + cfg + ":2) 198.19.0.1/24: is IPv4, and stream 0 (reverse0) is IPv6"
	if code != 2 || !strings.Contains(stderr, want) || strings.Contains(stderr, "--rx-src-ip") {
		t.Fatalf("exit %d, %q; want exit 2 and %q", code, stderr, want)
	}
}
