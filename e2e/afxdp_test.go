//go:build linux

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// TestAfxdpMixedOverVeth: 200,000 frames of the mixed template at a fixed
// rate from 2 afxdp workers (one socket per queue of a 2-queue veth) arrive
// exactly once each, intact, with exact per-stream counts, both at wpg's
// AF_XDP receiver (one socket per receive queue, frames steered by its XDP
// program) and at the AF_PACKET one.
func TestAfxdpMixedOverVeth(t *testing.T) {
	for _, c := range []struct {
		name, rx string
		rxArgs   []string
	}{
		{"into-afxdp", "afxdp", nil},
		{"into-afxdp-generic", "afxdp", []string{"--xdp-mode", "generic"}},
		{"into-afpacket", "afpacket", nil},
	} {
		rx := c.rx
		t.Run(c.name, func(t *testing.T) {
			v := testbed.NewVeth(t, testbed.Queues(2))
			// A 64 MiB ring (afxdp: UMEM per queue, all of it on the fill
			// ring: 32768 chunks) holds 655 ms of a queue's 50 kpps: the
			// 16 MiB default (164 ms) ran dry under a loaded full suite,
			// the socket dropping what arrived
			// (rx_fill_ring_empty_descs, checked below).
			r := startRecv(t, v, append([]string{"--backend", rx, "--expect", "200000", "--idle-timeout", "5s", "--ring-bytes", "64MiB"}, c.rxArgs...)...)
			rep := sendMixed(t, v, "--backend", "afxdp", "--workers", "2", "--rate", "100kpps")
			be, _ := rep["backend"].(map[string]any)
			if be["backend"] != "afxdp" || be["mode"] != "copy" {
				t.Errorf("sender backend %v", be)
			}
			res, code := r.wait(t)
			if code != 0 || res.Frames != mixedFrames || res.Lost != 0 || res.Duplicated != 0 || res.Corrupted != 0 || res.Missing != 0 || res.Unsigned != 0 || res.Stop != "expect" {
				t.Fatalf("exit %d, report %+v\nreceiver %+v\nstderr: %s", code, res, res.Backend, r.errb.String())
			}
			if res.Backend.Backend != rx {
				t.Errorf("receiver %+v", res.Backend)
			}
			if attach := res.Backend.Details["xdp_attach"]; rx == "afxdp" && strings.HasPrefix(attach, "generic") != (c.rxArgs != nil) {
				t.Errorf("%v: attached %q", c.rxArgs, attach)
			}
			// The sockets' counters (XDP_STATISTICS): nothing dropped.
			if d := res.Backend.Details; rx == "afxdp" && (d["queues"] != "0-1" || d["kernel_drops"] != "0" || d["rx_dropped"] != "0" ||
				d["rx_ring_full"] != "0" || d["rx_invalid_descs"] != "0" || d["rx_fill_ring_empty_descs"] == "" ||
				!strings.HasPrefix(d["rx_timestamps"], "200000 frames")) {
				t.Errorf("afxdp receiver details %v", d)
			}
			if len(res.Streams) != len(mixedShares) {
				t.Fatalf("streams %+v", res.Streams)
			}
			for i, s := range res.Streams {
				if want := mixedFrames / 10 * mixedShares[i]; s.Frames != want || s.Lost != 0 || s.Duplicated != 0 {
					t.Errorf("stream %d: %+v, want %d frames", i, s, want)
				}
			}
			ws, _ := rep["workers"].([]any)
			if len(ws) != 2 {
				t.Fatalf("workers %v", rep["workers"])
			}
		})
	}
}

// TestAfxdpBenchInfo: the report says copy mode and why, the queue, the
// UMEM, the NUMA node (unknown on veth) and the kick, completion and
// ring-full counters; --ring-bytes caps the UMEM and says so.
func TestAfxdpBenchInfo(t *testing.T) {
	v := testbed.NewVeth(t)
	out, errs, code := run(t, t.TempDir(), "bench", "--backend", "afxdp", "-i", v.Outer, "--duration", "300ms", "--ring-bytes", "1MiB", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep struct {
		Frames  uint64   `json:"frames"`
		Notes   []string `json:"notes"`
		Backend struct {
			Mode      string            `json:"mode"`
			Reason    string            `json:"reason"`
			NUMANode  int               `json:"numa_node"`
			RingDepth int               `json:"ring_depth"`
			Details   map[string]string `json:"details"`
			Adjusted  []string          `json:"adjusted"`
		} `json:"backend"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	b := rep.Backend
	if rep.Frames == 0 || b.Mode != "copy" || !strings.Contains(b.Reason, "veth") || b.NUMANode != -1 || b.RingDepth != 512 {
		t.Errorf("report %+v", rep)
	}
	for _, k := range []string{"queue", "umem_bytes", "kicks", "completions", "ring_full_waits", "umem_numa", "tx_invalid_descs", "tx_ring_empty_descs"} {
		if b.Details[k] == "" {
			t.Errorf("detail %s missing: %v", k, b.Details)
		}
	}
	if b.Details["umem_bytes"] != "1048576" {
		t.Errorf("UMEM %s", b.Details["umem_bytes"])
	}
	if len(b.Adjusted) != 1 || !strings.Contains(b.Adjusted[0], "capped to 512") {
		t.Errorf("adjusted %v", b.Adjusted)
	}
	out, _, code = run(t, t.TempDir(), "bench", "--backend", "afxdp", "-i", v.Outer, "--duration", "200ms")
	if code != 0 || !strings.Contains(out, "afxdp on "+v.Outer+", mode copy") || !strings.Contains(out, "NUMA node") {
		t.Errorf("table: exit %d\n%s", code, out)
	}
}

// TestAfxdpBadInput: each refusal is one line naming the fix, and nothing
// is left behind.
func TestAfxdpBadInput(t *testing.T) {
	v := testbed.NewVeth(t)
	nobody, smallMemlock, direct := refusalWrappers(t)
	noBPF := []string{"setpriv", "--bounding-set", "-bpf,-net_admin,-sys_admin,-perfmon", "--inh-caps=-bpf,-net_admin,-sys_admin,-perfmon"}
	send := []string{"send", "--backend", "afxdp", "-i", v.Outer, "--count", "10"}
	recvArgs := []string{"recv", "--backend", "afxdp", "-i", v.Outer, "--expect", "1"}
	with := func(base []string, more ...string) []string { return append(append([]string{}, base...), more...) }
	cases := []refusal{
		{"no CAP_NET_RAW", nobody, send, []string{"CAP_NET_RAW", "setcap"}},
		{"no CAP_NET_RAW recv", nobody, recvArgs, []string{"CAP_NET_RAW", "setcap"}},
		{"no CAP_BPF recv", noBPF, recvArgs, []string{"CAP_BPF", "CAP_NET_ADMIN", "setcap"}},
		{"UMEM over memlock", smallMemlock, with(send, "--ring-bytes", "16MiB"), []string{"UMEM", "ulimit -l", "LimitMEMLOCK", "--ring-bytes"}},
		{"UMEM over memlock recv", smallMemlock, recvArgs, []string{"UMEM", "ulimit -l", "--ring-bytes"}},
		{"queue beyond count", direct, with(send, "--queue", "3"), []string{"queue 3", "1 TX queue", "ip link add " + v.Outer + " numtxqueues 4 numrxqueues 4 type veth"}},
		{"workers beyond queues", direct, with(send, "--workers", "2"), []string{"queues 0-1", "ip link add " + v.Outer + " numtxqueues 2 numrxqueues 2 type veth"}},
		{"zero-copy unsupported", direct, with(send, "--xdp-mode", "native"), []string{"zero-copy", "veth", "--xdp-mode auto"}},
		{"bad xdp mode", direct, with(send, "--xdp-mode", "fast"), []string{"--xdp-mode", "auto, native", "generic"}},
		{"frame over MTU", direct, with(send, "--size", "2000"), []string{"2000", "MTU", "ip link set " + v.Outer + " mtu"}},
		{"missing interface", direct, []string{"send", "--backend", "afxdp", "-i", "wpg-nonesuch0", "--count", "1"}, []string{"wpg-nonesuch0", "existing interfaces"}},
	}
	checkRefusals(t, cases)
	noXDP(t, v)

	// A queue in use: a receiver holds every queue of the inner end.
	r := startRecv(t, v, "--backend", "afxdp", "--duration", "30s")
	cmd := v.Command(t.Context(), testbed.Wpg(t), "recv", "--backend", "afxdp", "-i", v.Inner, "--expect", "1")
	_, errs, code := runCmd(t, cmd)
	if code == 0 || !strings.Contains(errs, "in use (EBUSY)") || !strings.Contains(errs, "--queue") {
		t.Errorf("second receiver: exit %d, %q", code, errs)
	}
	_ = r.cmd.Process.Signal(syscall.SIGINT)
	if _, code := r.wait(t); code != 0 {
		t.Errorf("first receiver: exit %d: %s", code, r.errb.String())
	}
	noXDP(t, v)

	// The interface is down.
	if out, err := exec.Command("ip", "link", "set", v.Outer, "down").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	_, errs, code = run(t, t.TempDir(), send...)
	if code == 0 || !strings.Contains(errs, "down") || !strings.Contains(errs, "ip link set "+v.Outer+" up") {
		t.Errorf("interface down: exit %d, %q", code, errs)
	}
}

// noXDP fails unless, within a few seconds, no XDP program is attached to
// either end of v.
func noXDP(t *testing.T, v *testbed.Veth) {
	t.Helper()
	var out []byte
	for range 50 {
		inner, err := exec.Command("ip", "-n", v.NS, "link", "show", v.Inner).CombinedOutput()
		if err != nil {
			t.Fatalf("ip link show: %v: %s", err, inner)
		}
		outer, err := exec.Command("ip", "link", "show", v.Outer).CombinedOutput()
		if err != nil {
			t.Fatalf("ip link show: %v: %s", err, outer)
		}
		out = append(inner, outer...)
		if !strings.Contains(string(out), "xdp") {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("an XDP program is still attached:\n%s", out)
}

// TestAfxdpKilledReceiverLeavesNoProgram: the receiver's XDP program is
// attached while it runs and gone once it is killed with SIGKILL (the
// kernel drops the BPF link with the process), and a new receiver can
// take the queues at once.
func TestAfxdpKilledReceiverLeavesNoProgram(t *testing.T) {
	v := testbed.NewVeth(t, testbed.Queues(2))
	r := startRecv(t, v, "--backend", "afxdp", "--duration", "60s")
	out, err := exec.Command("ip", "-n", v.NS, "link", "show", v.Inner).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "prog/xdp") || !strings.Contains(string(out), "wpg_steer") {
		t.Fatalf("while receiving, ip link show: %v\n%s", err, out)
	}
	if err := r.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-r.done
	noXDP(t, v)
	// The queues are free again: a receiver started now gets frames.
	r2 := startRecv(t, v, "--backend", "afxdp", "--expect", "1000", "--idle-timeout", "5s")
	_, errs, code := run(t, t.TempDir(), "send", "--backend", "afxdp", "-i", v.Outer, "--count", "1000", "--rate", "10kpps")
	if code != 0 {
		t.Fatalf("send: exit %d: %s", code, errs)
	}
	if res, code := r2.wait(t); code != 0 || res.Frames != 1000 || res.Lost != 0 {
		t.Errorf("after the kill: exit %d, %+v\n%s", code, res, r2.errb.String())
	}
	noXDP(t, v)
}

// TestAfxdpRateOnTheWire: at 100 kpps, afxdp and afpacket one after the
// other, captured on the far end (tcpdump, nanosecond timestamps). Like
// TestRateOnTheWire it asserts only what a busy host cannot change (every
// frame arrives, catch-up never floods) and logs the precision figures
// (achieved rate, share of gaps within ±10 %) for docs/perf.md, "AF_XDP
// (#12)"; WPG_RATE_RESULTS appends them as table rows.
func TestAfxdpRateOnTheWire(t *testing.T) {
	wpg := testbed.Wpg(t)
	testbed.RequireTool(t, "tcpdump", "tcpdump")
	dur := "3s"
	if d := os.Getenv("WPG_RATE_DURATION"); d != "" {
		dur = d
	}
	const interval = 10 * time.Microsecond
	for _, b := range []string{"afxdp", "afpacket"} {
		t.Run(b, func(t *testing.T) {
			rep, s := sendCaptured(t, wpg, interval, "--backend", b, "--rate", "100kpps", "--duration", dur)
			t.Logf("%s: report achieved=%.5f; wire: frames=%d pps=%.1f (%.5f of target), gaps within ±10%%: %.2f%%, p50=%v p99=%v, max %d frames in 1 ms",
				b, rep.AchievedRatio, s.Frames, s.PPS, s.PPS*interval.Seconds(), 100*s.WithinShare, s.P50, s.P99, s.MaxPerMs)
			rateRow("| %s | 100kpps | %.5f | %.5f | %.2f %% | %v | %v | %d |\n",
				b, rep.AchievedRatio, s.PPS*interval.Seconds(), 100*s.WithinShare, s.P50, s.P99, s.MaxPerMs)
			checkCaptured(t, rep, s)
		})
	}
}
