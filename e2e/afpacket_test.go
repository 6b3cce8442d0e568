package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// runAs runs the shared wpg binary through a wrapper (setpriv, prlimit…)
// and returns stdout, stderr and the exit code.
func runAs(t *testing.T, wrapper []string, args ...string) (string, string, int) {
	t.Helper()
	full := append(append([]string{}, wrapper[1:]...), append([]string{testbed.WpgShared(t)}, args...)...)
	cmd := exec.Command(wrapper[0], full...)
	cmd.Dir = t.TempDir()
	return runCmd(t, cmd)
}

// refusal is a command line (run under wrapper: a privilege or limit
// change) that wpg must refuse with one "wpg: " line containing want.
type refusal struct {
	name    string
	wrapper []string
	args    []string
	want    []string
}

// refusalWrappers are the wrappers the bad-input tests run wpg under:
// nobody (no privileges at all), smallMemlock (root without CAP_IPC_LOCK
// and a 1 MiB memlock limit) and direct (as it is).
func refusalWrappers(t *testing.T) (nobody, smallMemlock, direct []string) {
	testbed.RequireTool(t, "setpriv", "util-linux")
	testbed.RequireTool(t, "prlimit", "util-linux")
	return []string{"setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--inh-caps=-all"},
		[]string{"setpriv", "--bounding-set", "-ipc_lock", "--inh-caps=-ipc_lock", "prlimit", "--memlock=1048576:1048576"},
		[]string{"env"}
}

// checkRefusals runs each case and checks its one-line refusal.
func checkRefusals(t *testing.T, cases []refusal) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := runAs(t, c.wrapper, c.args...)
			if code == 0 {
				t.Fatalf("exit 0, stdout %q stderr %q", out, errs)
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
}

// TestAfpacketBadInput: each refusal is one clear line naming the fix, and
// nothing (socket, ring) is left behind: the process exits non-zero before
// sending anything.
func TestAfpacketBadInput(t *testing.T) {
	v := testbed.NewVeth(t)
	nobody, smallMemlock, direct := refusalWrappers(t)
	cases := []refusal{
		{"no privileges", nobody, []string{"send", "-i", v.Outer, "--count", "10"}, []string{"CAP_NET_RAW", "setcap"}},
		{"no privileges recv", nobody, []string{"recv", "-i", v.Outer, "--expect", "1"}, []string{"CAP_NET_RAW", "setcap"}},
		{"missing interface", direct, []string{"send", "-i", "wpg-nonesuch0", "--count", "10"}, []string{"wpg-nonesuch0", "existing interfaces", v.Outer}},
		{"missing interface recv", direct, []string{"recv", "-i", "wpg-nonesuch0"}, []string{"wpg-nonesuch0", "existing interfaces"}},
		{"frame over MTU", direct, []string{"send", "-i", v.Outer, "--size", "2000", "--count", "10"}, []string{"2000", "MTU", "ip link set " + v.Outer + " mtu"}},
		{"ring over memlock", smallMemlock, []string{"send", "-i", v.Outer, "--count", "10", "--size", "1500", "--ring-bytes", "16MiB"}, []string{"memlock", "ulimit -l", "LimitMEMLOCK", "--ring-bytes"}},
		{"rx ring over memlock", smallMemlock, []string{"recv", "-i", v.Outer, "--expect", "1"}, []string{"memlock", "ulimit -l"}},
	}
	checkRefusals(t, cases)
	// The interface is down.
	if out, err := exec.Command("ip", "link", "set", v.Outer, "down").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	_, errs, code := run(t, t.TempDir(), "send", "-i", v.Outer, "--count", "10")
	if code == 0 || !strings.Contains(errs, "down") || !strings.Contains(errs, "ip link set "+v.Outer+" up") {
		t.Errorf("interface down: exit %d, %q", code, errs)
	}
}

// TestAfpacketBenchInfo: `wpg bench --backend afpacket` says which mode
// ran, the effective ring depth and the NUMA node (-1: unknown, as for a
// veth).
func TestAfpacketBenchInfo(t *testing.T) {
	v := testbed.NewVeth(t)
	for _, c := range []struct {
		args  []string
		mode  string
		depth float64
	}{
		{[]string{"--duration", "300ms"}, "tx-ring", 4096},
		{[]string{"--duration", "300ms", "--ring-bytes", "256KiB"}, "tx-ring", 2048},
		{[]string{"--duration", "300ms", "--no-tx-ring"}, "sendmmsg", 0},
	} {
		out, errs, code := run(t, t.TempDir(), append([]string{"bench", "--backend", "afpacket", "-i", v.Outer}, c.args...)...)
		if code != 0 {
			t.Fatalf("bench %v: exit %d: %s", c.args, code, errs)
		}
		if !strings.Contains(out, "mode "+c.mode) || (c.depth > 0 && !strings.Contains(out, fmt.Sprintf("ring depth           %d (effective)", int(c.depth)))) {
			t.Errorf("bench %v: mode %s / depth %v not shown:\n%s", c.args, c.mode, c.depth, out)
		}
		out, errs, code = run(t, t.TempDir(), append([]string{"bench", "--backend", "afpacket", "-i", v.Outer, "--json"}, c.args...)...)
		if code != 0 {
			t.Fatalf("bench --json %v: exit %d: %s", c.args, code, errs)
		}
		var rep struct {
			Backend map[string]any `json:"backend"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		numa, ok := rep.Backend["numa_node"].(float64)
		depth, _ := rep.Backend["ring_depth"].(float64)
		if rep.Backend["mode"] != c.mode || depth != c.depth || !ok || numa != -1 {
			t.Errorf("bench --json %v: backend %v", c.args, rep.Backend)
		}
		if c.mode == "sendmmsg" && rep.Backend["reason"] != "--no-tx-ring" {
			t.Errorf("sendmmsg without its reason: %v", rep.Backend)
		}
	}
}

// TestSysinfo: `wpg sysinfo -i IFACE --json` describes the machine and the
// interface, and lists the AF_PACKET feature probes; an unknown interface
// is one line naming the ones that exist.
func TestSysinfo(t *testing.T) {
	out, errs, code := run(t, t.TempDir(), "sysinfo", "-i", "lo", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var e struct {
		Kernel    string `json:"kernel"`
		CPUs      int    `json:"cpus"`
		Allowed   string `json:"allowed_cpus"`
		Interface struct {
			Name string `json:"name"`
			MTU  int    `json:"mtu"`
		} `json:"interface"`
		Features []struct {
			Name, Status string
		} `json:"features"`
	}
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatal(err)
	}
	if e.Kernel == "" || e.CPUs < 1 || e.Allowed == "" || e.Interface.Name != "lo" || e.Interface.MTU < 1500 {
		t.Errorf("sysinfo: %+v", e)
	}
	probes := 0
	for _, f := range e.Features {
		if strings.HasPrefix(f.Name, "afpacket:") {
			probes++
			if os.Geteuid() == 0 && f.Status != "available" {
				t.Errorf("as root on Linux 6.x, %s: %s", f.Name, f.Status)
			}
		}
	}
	if probes != 4 {
		t.Errorf("%d afpacket probes, want 4: %+v", probes, e.Features)
	}
	_, errs, code = run(t, t.TempDir(), "sysinfo", "-i", "wpg-nonesuch0")
	if code == 0 || !strings.Contains(errs, "existing interfaces") || !strings.Contains(errs, "lo") {
		t.Errorf("unknown interface: exit %d, %q", code, errs)
	}
}
