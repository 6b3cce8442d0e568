//go:build pcap && linux

package e2e

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// TestPcapMixedOverVeth: 200,000 frames of examples/mixed.wpg.yaml
// injected with libpcap on one end of a veth pair arrive at `wpg recv` on
// the other exactly once each, intact, with exact per-stream counts; the
// report names libpcap's version.
func TestPcapMixedOverVeth(t *testing.T) {
	v := testbed.NewVeth(t)
	bin := wpgTagged(t, "pcap")
	r := startRecv(t, v, "--expect", "200000", "--idle-timeout", "5s")
	cmd := exec.Command(bin, "send", repoFile(t, "examples/mixed.wpg.yaml"), "--backend", "pcap", "-i", v.Outer, "--count", "200000", "--rate", "100kpps", "--json")
	cmd.Dir = t.TempDir()
	out, errs, code := runCmd(t, cmd)
	if code != 0 {
		t.Fatalf("wpg send --backend pcap: exit %d: %s", code, errs)
	}
	var rep struct {
		Frames  uint64 `json:"frames"`
		Backend struct {
			Backend, Mode, Interface string
			Details                  map[string]string
		} `json:"backend"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}
	if rep.Frames != mixedFrames || rep.Backend.Backend != "pcap" || rep.Backend.Mode != "pcap_inject" || rep.Backend.Interface != v.Outer ||
		!strings.HasPrefix(rep.Backend.Details["libpcap"], "libpcap version 1.") {
		t.Errorf("report %+v", rep)
	}
	res, code := r.wait(t)
	if code != 0 || res.Frames != mixedFrames || res.Lost != 0 || res.Duplicated != 0 || res.Corrupted != 0 || res.Missing != 0 || res.Stop != "expect" {
		t.Fatalf("exit %d, report %+v\nstderr: %s", code, res, r.errb.String())
	}
	for i, s := range res.Streams {
		want := mixedFrames / 10 * mixedShares[i]
		if s.Stream != uint16(i) || s.Frames != want || s.NextSeq != want || s.Lost != 0 || s.Reordered != 0 {
			t.Errorf("stream %d: %+v, want %d frames", i, s, want)
		}
	}
}

// TestPcapErrors: each refusal is one line that names the fix: more than
// one worker, no privileges (libpcap's own message carried through), an
// interface that does not exist, one that is down.
func TestPcapErrors(t *testing.T) {
	v := testbed.NewVeth(t)
	testbed.RequireTool(t, "setpriv", "util-linux")
	bin := wpgTagged(t, "pcap")
	nobody := []string{"setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--inh-caps=-all"}
	shared := t.TempDir()
	if err := exec.Command("chmod", "755", shared).Run(); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", bin, shared+"/wpg").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	cases := []struct {
		name string
		cmd  []string
		code int
		want []string
	}{
		{"two workers", []string{bin, "send", "--backend", "pcap", "-i", v.Outer, "--workers", "2", "--count", "10"}, 2, []string{"one worker", "packet socket", "--workers 1"}},
		{"no privileges", append(nobody, shared+"/wpg", "send", "--backend", "pcap", "-i", v.Outer, "--count", "10"), 1, []string{"CAP_NET_RAW", "setcap", "pcap_activate"}},
		{"missing interface", []string{bin, "send", "--backend", "pcap", "-i", "wpg-nonesuch0", "--count", "10"}, 1, []string{"wpg-nonesuch0", "existing interfaces", v.Outer}},
		{"frame over MTU", []string{bin, "send", "--backend", "pcap", "-i", v.Outer, "--size", "2000", "--count", "10"}, 1, []string{"MTU", "ip link set " + v.Outer + " mtu"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(c.cmd[0], c.cmd[1:]...)
			cmd.Dir = shared
			out, errs, code := runCmd(t, cmd)
			if code == 0 || code != c.code {
				t.Fatalf("exit %d, want %d: %s %s", code, c.code, out, errs)
			}
			line := strings.TrimSpace(errs)
			if strings.Count(line, "\n") != 0 || !strings.HasPrefix(line, "wpg: ") {
				t.Errorf("want one line starting with \"wpg: \", got %q", errs)
			}
			for _, w := range c.want {
				if !strings.Contains(line, w) {
					t.Errorf("error %q lacks %q", line, w)
				}
			}
		})
	}
	if out, err := exec.Command("ip", "link", "set", v.Outer, "down").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	cmd := exec.Command(bin, "send", "--backend", "pcap", "-i", v.Outer, "--count", "10")
	cmd.Dir = shared
	_, errs, code := runCmd(t, cmd)
	if code == 0 || !strings.Contains(errs, "ip link set "+v.Outer+" up") {
		t.Errorf("interface down: exit %d, %q", code, errs)
	}
}
