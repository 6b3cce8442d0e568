package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/netns"
)

// Next-hop resolution on tagged ports: the streams carry a VLAN tag (one
// 802.1Q tag, or QinQ) and leave port A on a trunk to a router whose
// addresses are on VLAN subinterfaces. With no MAC given, wpg asks for
// each port's gateway with the streams' tags and answers the router's
// tagged requests for the ports' addresses: every frame crosses the
// router (0 lost), over IPv4 (ARP) and IPv6 (Neighbor Discovery).
func TestDeviceVLANThroughRouter(t *testing.T) {
	for _, v := range []struct {
		name, tags string
		outer      int
		report     string // the ports' vlan_tags in the report
	}{
		{"vlan", "vlan: {id: 100}", 0, "0x8100 100"},
		{"qinq", "qinq: {outer: {id: 10}, inner: {id: 100}}", 10, "0x88a8 10, 0x8100 100"},
	} {
		t.Run(v.name, func(t *testing.T) {
			r := newRouter(t, netns.RouterOptions{})
			a, b, err := r.AddVLAN(context.Background(), v.outer, 100)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			for _, fam := range []struct {
				name, layer        string
				src, gw, rxSrc, rx string
			}{
				{"ipv4", "ipv4", a.Addr4.String(), a.Gateway4.String(), b.Addr4.String(), b.Gateway4.String()},
				{"ipv6", "ipv6", a.Addr6.String(), a.Gateway6.String(), b.Addr6.String(), b.Gateway6.String()},
			} {
				t.Run(fam.name, func(t *testing.T) {
					tpl := filepath.Join(dir, v.name+fam.name+".wpg.yaml")
					text := fmt.Sprintf("streams:\n  - name: tagged\n    size: 128\n    %s\n    %s: {src: %q, dst: %q}\n    udp: {src: {from: 1024, to: 2047}, dst: 9}\n",
						v.tags, fam.layer, strings.Split(fam.src, "/")[0], strings.Split(fam.rxSrc, "/")[0])
					if err := os.WriteFile(tpl, []byte(text), 0o644); err != nil {
						t.Fatal(err)
					}
					out, stderr, code := run(t, dir, "send", tpl, "--netns", r.Ports, "-i", a.Port, "--src-ip", fam.src, "--gateway", fam.gw,
						"--rx-netns", r.Ports, "--rx-interface", b.Port, "--rx-src-ip", fam.rxSrc, "--rx-gateway", fam.rx,
						"--count", "20000", "--rate", "10kpps", "--json")
					if code != 0 {
						t.Fatalf("exit %d: %s\n%s", code, stderr, out)
					}
					rep := decodePair(t, out)
					vf := rep.Verification
					if rep.Frames != 20000 || vf.Frames != 20000 || vf.Lost != 0 || vf.Duplicated != 0 || vf.Corrupted != 0 || vf.WrongStream != 0 {
						t.Fatalf("sent %d, received %+v; want 20000 received, 0 lost", rep.Frames, vf)
					}
					if len(rep.Ports) != 2 || rep.Ports[0].GatewayMAC == "" || rep.Ports[1].GatewayMAC == "" ||
						len(rep.Directions) != 1 || rep.Directions[0].Verdict != "pass" {
						t.Fatalf("ports %+v, directions %+v", rep.Ports, rep.Directions)
					}
					checkPortTags(t, rep, v.report)
					t.Logf("%s %s: %d sent, %d received, %d lost; gateway %s, port B answered %d", v.name, fam.name, rep.Frames, vf.Frames, vf.Lost, rep.Ports[0].GatewayMAC, rep.Ports[1].Answered)
					// wpg preview resolves the gateway on the VLAN as the run does.
					pout, perr, code := run(t, dir, "preview", tpl, "--netns", r.Ports, "-i", a.Port, "--src-ip", fam.src, "--gateway", fam.gw, "-n", "1")
					if code != 0 || !strings.Contains(pout, rep.Ports[0].GatewayMAC) {
						t.Fatalf("preview: exit %d, want the gateway's MAC %s in it: %s\n%s", code, rep.Ports[0].GatewayMAC, perr, pout)
					}
				})
			}
			// Both ways: B sends the mirrored streams, tagged as A's, through
			// its own gateway on the VLAN.
			out, stderr, code := run(t, dir, "send", filepath.Join(dir, v.name+"ipv4.wpg.yaml"), "--netns", r.Ports, "-i", a.Port, "--src-ip", a.Addr4.String(), "--gateway", a.Gateway4.String(),
				"--rx-netns", r.Ports, "--rx-interface", b.Port, "--rx-src-ip", b.Addr4.String(), "--rx-gateway", b.Gateway4.String(),
				"--bidir", "--count", "10000", "--rate", "5kpps", "--json")
			if code != 0 {
				t.Fatalf("--bidir: exit %d: %s\n%s", code, stderr, out)
			}
			rep := decodePair(t, out)
			if len(rep.Directions) != 2 || rep.Frames != 20000 || rep.Verification.Frames != 20000 || rep.Verification.Lost != 0 {
				t.Fatalf("--bidir: %d directions, %d sent, received %+v; want 2, 20000 received, 0 lost", len(rep.Directions), rep.Frames, rep.Verification)
			}
			for _, d := range rep.Directions {
				if d.Verdict != "pass" || d.Verification.Frames != 10000 {
					t.Errorf("--bidir %s: %+v", d.Direction, d)
				}
			}
			checkPortTags(t, rep, v.report)
			t.Logf("%s --bidir: %d sent, %d received, %d lost", v.name, rep.Frames, rep.Verification.Frames, rep.Verification.Lost)
		})
	}
}

// checkPortTags: the report's ports[] show each port's VLAN tags, those
// its agent asked and answered with (want: "TPID ID" of each, outer
// first, joined by ", ").
func checkPortTags(t *testing.T, rep pairReport, want string) {
	t.Helper()
	for _, p := range rep.Ports {
		var got []string
		for _, tg := range p.VLANTags {
			got = append(got, fmt.Sprintf("%s %d", tg.TPID, tg.ID))
		}
		if strings.Join(got, ", ") != want {
			t.Errorf("port %s (%s): vlan_tags %v; want %s", p.Role, p.Interface, got, want)
		}
	}
}

// Streams of two VLANs on one port are refused before anything is sent:
// one line naming the port, both tag stacks and the fix.
func TestDeviceVLANTwoStacksRefused(t *testing.T) {
	dir := t.TempDir()
	tpl := filepath.Join(dir, "two.wpg.yaml")
	text := "streams:\n  - {name: a, vlan: {id: 100}, ipv4: {dst: 198.19.1.1}, udp: {}}\n  - {name: b, vlan: {id: 200}, ipv4: {dst: 198.19.1.1}, udp: {}}\n"
	if err := os.WriteFile(tpl, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := run(t, dir, "send", tpl, "-i", "lo", "--src-ip", "198.18.1.1/24", "--gateway", "198.18.1.254", "--count", "1")
	if code == 0 {
		t.Fatalf("two VLANs on one port were sent: %s", out)
	}
	for _, w := range []string{"-i/--interface lo", "802.1Q 100", "802.1Q 200", "one VLAN per port"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr %q, want %q in it", stderr, w)
		}
	}
	t.Logf("exit %d: %s", code, strings.TrimSpace(stderr))
}
