//go:build dpdk && linux

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// ealBase are the EAL arguments every test gives: no hugepages, no shared
// files or telemetry socket (nothing left in /var/run/dpdk), no PCI
// scan (the machine's own NICs are never probed; only --vdev ports).
var ealBase = "--no-huge -m 512 --no-shconf --no-telemetry --no-pci --file-prefix " + ealPrefix

// ealPrefix names the EAL runtime directory of this test process's DPDK
// processes (/var/run/dpdk/PREFIX: the EAL makes it, empty, even with
// --no-shconf); cleanDPDK removes it when a test ends.
var ealPrefix = fmt.Sprintf("wpg-e2e-%d", os.Getpid())

func cleanDPDK(t *testing.T) {
	t.Cleanup(func() {
		os.RemoveAll("/var/run/dpdk/" + ealPrefix)
		os.Remove("/var/run/dpdk") // only when empty: no other DPDK process uses it
	})
}

// dpdkSend runs the tagged wpg's send with --backend dpdk and the EAL
// arguments, and returns its JSON report.
func dpdkSend(t *testing.T, bin, eal string, args ...string) map[string]any {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"send", "--backend", "dpdk", "--dpdk-args", ealBase + " " + eal, "--json"}, args...)...)
	cmd.Dir = t.TempDir()
	out, errs, code := runCmd(t, cmd)
	if code != 0 {
		t.Fatalf("wpg send --backend dpdk %v: exit %d: %s", args, code, errs)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("send report %q: %v", out, err)
	}
	return rep
}

func details(t *testing.T, rep map[string]any) map[string]any {
	t.Helper()
	b, _ := rep["backend"].(map[string]any)
	d, _ := b["details"].(map[string]any)
	if d == nil {
		t.Fatalf("report without backend details: %v", rep["backend"])
	}
	return d
}

// TestDPDKNullSink: the generator path into DPDK's net_null sink: every
// frame counted, the report names the port, its driver, the queues of the
// workers, the NUMA socket, the link and the burst counters.
func TestDPDKNullSink(t *testing.T) {
	cleanDPDK(t)
	testbed.RequireRoot(t)
	bin := wpgTagged(t, "dpdk")
	rep := dpdkSend(t, bin, "--vdev net_null0", "-i", "net_null0", "--workers", "2", "--queue", "1", "--count", "100000", "--size", "64")
	if rep["frames"].(float64) != 100000 {
		t.Fatalf("sent %v frames, want 100000", rep["frames"])
	}
	b := rep["backend"].(map[string]any)
	d := details(t, rep)
	if b["mode"] != "tx-burst" || b["interface"] != "net_null0" || d["driver"] != "net_null" || d["port"] != "0" || d["queues"] != "1-2 (3 configured)" {
		t.Errorf("backend %v", b)
	}
	for _, k := range []string{"link", "socket", "burst", "tx_bursts", "tx_retries", "dpdk", "eal_args"} {
		if d[k] == nil || d[k] == "" {
			t.Errorf("details lack %s: %v", k, d)
		}
	}
	if ws, _ := rep["workers"].([]any); len(ws) != 2 {
		t.Fatalf("workers %v", rep["workers"])
	}
	// The EAL arguments from wpg.toml (dpdk.eal_args) when no --dpdk-args.
	dir := t.TempDir()
	cfg := filepath.Join(dir, "wpg.toml")
	if err := os.WriteFile(cfg, []byte("[dpdk]\neal_args = \""+ealBase+" --vdev net_null3\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "send", "--config", cfg, "--backend", "dpdk", "-i", "net_null3", "--count", "1000", "--json")
	cmd.Dir = dir
	out, errs, code := runCmd(t, cmd)
	if code != 0 {
		t.Fatalf("dpdk.eal_args from wpg.toml: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, `"eal_args": "`+ealBase+` --vdev net_null3"`) {
		t.Errorf("report does not show the file's EAL arguments:\n%s", out)
	}
}

// startDPDKRecv starts `wpg recv --backend dpdk` on a net_af_packet port
// over v.Inner, inside v's namespace, and waits until it receives. The
// port's AF_PACKET ring holds 8192 frames (16 MiB, as wpg's own
// receiver's): the default 512 overflow while a busy machine deschedules
// the receiver.
func startDPDKRecv(t *testing.T, v *testbed.Veth, bin string, args ...string) *receiver {
	t.Helper()
	return startRecvWith(t, v, bin, "wpg recv --backend dpdk", append([]string{"recv", "--backend", "dpdk", "--dpdk-args", ealBase + " --vdev net_af_packet0,iface=" + v.Inner + ",framecnt=8192", "-i", "0", "--json"}, args...))
}

// TestDPDKMixedOverVeth: 200,000 frames of examples/mixed.wpg.yaml from
// two workers on two TX queues of a net_af_packet port over a veth pair
// into `wpg recv` at the far end arrive exactly once each, intact, with
// exact per-stream counts; and the other way round, afpacket into `wpg
// recv --backend dpdk` on a net_af_packet port in the namespace.
func TestDPDKMixedOverVeth(t *testing.T) {
	cleanDPDK(t)
	bin := wpgTagged(t, "dpdk")
	check := func(t *testing.T, r *receiver) {
		t.Helper()
		res, code := r.wait(t)
		if code != 0 || res.Frames != mixedFrames || res.Lost != 0 || res.Duplicated != 0 || res.Corrupted != 0 || res.Missing != 0 || res.Stop != "expect" {
			t.Fatalf("exit %d, report %+v\nreceiver %+v\nstderr: %s", code, res, res.Backend, r.errb.String())
		}
		if len(res.Streams) != len(mixedShares) {
			t.Fatalf("streams %+v", res.Streams)
		}
		for i, s := range res.Streams {
			want := mixedFrames / 10 * mixedShares[i]
			if s.Stream != uint16(i) || s.Frames != want || s.NextSeq != want || s.Lost != 0 {
				t.Errorf("stream %d: %+v, want %d frames", i, s, want)
			}
		}
	}
	t.Run("dpdk-2-queues-to-afpacket", func(t *testing.T) {
		v := testbed.NewVeth(t)
		r := startRecv(t, v, "--expect", "200000", "--idle-timeout", "5s")
		rep := dpdkSend(t, bin, "--vdev net_af_packet0,iface="+v.Outer+",qpairs=2", repoFile(t, "examples/mixed.wpg.yaml"),
			"-i", "net_af_packet0", "--workers", "2", "--count", "200000", "--rate", "100kpps")
		if rep["frames"].(float64) != mixedFrames {
			t.Fatalf("sent %v frames", rep["frames"])
		}
		if d := details(t, rep); d["driver"] != "net_af_packet" || d["queues"] != "0-1 (2 configured)" {
			t.Errorf("details %v", d)
		}
		check(t, r)
	})
	t.Run("afpacket-to-dpdk-recv", func(t *testing.T) {
		v := testbed.NewVeth(t)
		r := startDPDKRecv(t, v, bin, "--expect", "200000", "--idle-timeout", "5s")
		sendMixed(t, v, "--rate", "100kpps")
		check(t, r)
		var res struct {
			Backend struct {
				Backend string            `json:"backend"`
				Details map[string]string `json:"details"`
			} `json:"backend"`
		}
		if err := json.Unmarshal(r.out.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		if res.Backend.Backend != "dpdk" || res.Backend.Details["driver"] != "net_af_packet" || res.Backend.Details["port_ipackets"] == "" {
			t.Errorf("receiver backend %+v", res.Backend)
		}
	})
}

// TestDPDKErrors: each failure is one line that names the object and the
// fix: EAL arguments DPDK refuses, a port that does not exist, more TX
// queues than the device has, hugepages asked for and not reserved.
func TestDPDKErrors(t *testing.T) {
	cleanDPDK(t)
	v := testbed.NewVeth(t)
	bin := wpgTagged(t, "dpdk")
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"eal init failure", []string{"--dpdk-args", ealBase + " --vdev net_null0 --no-such-eal-option", "-i", "0"},
			[]string{"EAL initialisation", "--no-such-eal-option", "--dpdk-args", "dpdk.eal_args"}},
		{"eal help exits", []string{"--dpdk-args", ealBase + " --help", "-i", "0"}, []string{"--help", "drop it"}},
		{"no such port", []string{"--dpdk-args", ealBase + " --vdev net_null0", "-i", "net_nope9"},
			[]string{`no port "net_nope9"`, "port 0 (net_null0, net_null)", "--vdev"}},
		{"no such port id", []string{"--dpdk-args", ealBase + " --vdev net_null0", "-i", "7"}, []string{`no port "7"`, "net_null0"}},
		{"no port at all", []string{"--dpdk-args", ealBase, "-i", "0"}, []string{"found no port", "--vdev net_null0", "dpdk-devbind"}},
		{"queues beyond the device's", []string{"--dpdk-args", ealBase + " --vdev net_af_packet0,iface=" + v.Outer, "-i", "0", "--workers", "2"},
			[]string{"at most 1 TX queues", "needs 2", "qpairs"}},
		{"queue beyond the device's", []string{"--dpdk-args", ealBase + " --vdev net_null0", "-i", "0", "--queue", "1024"},
			[]string{"at most 1024 TX queues", "--queue 1024", "needs 1025"}},
	}
	if n, err := freeHugepagesOnHost(); err == nil && n == 0 {
		cases = append(cases, struct {
			name string
			args []string
			want []string
		}{"hugepages not reserved", []string{"--dpdk-args", "--vdev net_null0 --no-shconf --no-telemetry --no-pci --file-prefix " + ealPrefix, "-i", "0"}, []string{"hugepages", "nr_hugepages", "--no-huge -m 512"}})
	} else {
		t.Logf("hugepages are reserved here (%d free, %v): the hugepage error is not tried", n, err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"send", "--backend", "dpdk", "--count", "10"}, c.args...)...)
			cmd.Dir = t.TempDir()
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			if err == nil {
				t.Fatalf("exit 0: %s", out.String())
			}
			// The EAL prints its usage on standard output for a bad
			// option; the error is the last line of standard error.
			lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
			line := lines[len(lines)-1]
			if !strings.HasPrefix(line, "wpg: ") {
				t.Errorf("want a line starting with \"wpg: \", got %q", errb.String())
			}
			for _, w := range c.want {
				if !strings.Contains(line, w) {
					t.Errorf("error %q lacks %q", line, w)
				}
			}
		})
	}
}

// freeHugepagesOnHost sums the free hugepages of every size.
func freeHugepagesOnHost() (int64, error) {
	out, err := exec.Command("sh", "-c", "cat /sys/kernel/mm/hugepages/hugepages-*/free_hugepages").Output()
	if err != nil {
		return 0, err
	}
	var n int64
	for _, f := range strings.Fields(string(out)) {
		var k int64
		for _, c := range f {
			k = k*10 + int64(c-'0')
		}
		n += k
	}
	return n, nil
}
