package e2e

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/pcapgo"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/netns"
	"github.com/wpg-dev/wpg/internal/syncbuf"
	"github.com/wpg-dev/wpg/internal/testbed"
)

// newRouter is the test bed's router (internal/netns.NewRouter), removed
// when the test ends.
func newRouter(t *testing.T, o netns.RouterOptions) *netns.Router {
	t.Helper()
	testbed.RequireRoot(t)
	testbed.RequireTool(t, "ip", "iproute2")
	if o.Shape != nil {
		testbed.RequireTool(t, "tc", "iproute2")
	}
	r, err := netns.NewRouter(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("removing the router: %v", err)
		}
	})
	return r
}

// pairReport is what the device tests read of a send report.
type pairReport struct {
	Frames       uint64           `json:"frames"`
	Error        string           `json:"error"`
	Notes        []string         `json:"notes"`
	Verification pairVerification `json:"verification"`
	Ports        []struct {
		Role       string `json:"role"`
		Interface  string `json:"interface"`
		GatewayMAC string `json:"gateway_mac"`
		Answered   uint64 `json:"answered"`
		VLANTags   []struct {
			TPID string `json:"tpid"`
			ID   int    `json:"id"`
		} `json:"vlan_tags"`
	} `json:"ports"`
	Directions []struct {
		Direction    string           `json:"direction"`
		From         string           `json:"from"`
		To           string           `json:"to"`
		Frames       uint64           `json:"frames"`
		PPS          float64          `json:"pps"`
		Verdict      string           `json:"verdict"`
		Verification pairVerification `json:"verification"`
	} `json:"directions"`
}

type pairVerification struct {
	Frames      uint64 `json:"frames"`
	Lost        uint64 `json:"lost"`
	Duplicated  uint64 `json:"duplicated"`
	Reordered   uint64 `json:"reordered"`
	Corrupted   uint64 `json:"corrupted"`
	Unsigned    uint64 `json:"unsigned"`
	WrongStream uint64 `json:"wrong_stream"`
	JitterNs    int64  `json:"jitter_ns"`
	Latency     *struct {
		P50 int64 `json:"p50_ns"`
		P99 int64 `json:"p99_ns"`
	} `json:"latency"`
	Streams []struct {
		Stream   int    `json:"stream"`
		Frames   uint64 `json:"frames"`
		JitterNs int64  `json:"jitter_ns"`
	} `json:"streams"`
}

func decodePair(t *testing.T, out string) pairReport {
	t.Helper()
	var rep pairReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return rep
}

// Issue #26: through the router namespace, with no MAC given anywhere,
// one command sends 100,000 frames at 50 kpps on port A and receives them
// on port B: all received, none lost, with latency and jitter; over IPv4
// (ARP) and IPv6 (Neighbor Discovery).
func TestDeviceThroughRouter(t *testing.T) {
	r := newRouter(t, netns.RouterOptions{})
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
	}{
		{"ipv4", []string{"--src-ip", r.A.Addr4.String(), "--gateway", r.A.Gateway4.String(), "--rx-src-ip", r.B.Addr4.String()}},
		{"ipv6", []string{repoFile(t, "examples/router6.wpg.yaml"), "--src-ip", r.A.Addr6.String(), "--gateway", r.A.Gateway6.String(), "--rx-src-ip", r.B.Addr6.String()}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"send"}, c.args...)
			args = append(args, "--netns", r.Ports, "-i", r.A.Port, "--rx-netns", r.Ports, "--rx-interface", r.B.Port,
				"--count", "100000", "--rate", "50kpps", "--json")
			out, stderr, code := run(t, dir, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s\n%s", code, stderr, out)
			}
			rep := decodePair(t, out)
			v := rep.Verification
			if rep.Frames != 100000 || v.Frames != 100000 || v.Lost != 0 || v.Duplicated != 0 || v.Corrupted != 0 || v.WrongStream != 0 {
				t.Fatalf("sent %d, received %+v; want 100000 received, 0 lost", rep.Frames, v)
			}
			if v.Latency == nil || v.Latency.P50 <= 0 || v.Latency.P99 < v.Latency.P50 || v.JitterNs <= 0 {
				t.Fatalf("latency %+v, jitter %d: want p50, p99 and J measured", v.Latency, v.JitterNs)
			}
			if len(rep.Ports) != 2 || rep.Ports[0].GatewayMAC == "" || rep.Ports[1].Answered == 0 || len(rep.Directions) != 1 || rep.Directions[0].Verdict != "pass" {
				t.Fatalf("ports %+v, directions %+v", rep.Ports, rep.Directions)
			}
			t.Logf("%s: %d received, %d lost, latency p50 %d ns p99 %d ns, jitter %d ns; gateway %s, port B answered %d", c.name, v.Frames, v.Lost, v.Latency.P50, v.Latency.P99, v.JitterNs, rep.Ports[0].GatewayMAC, rep.Ports[1].Answered)
		})
	}
}

// Issue #26: --bidir through the router: the streams A→B and their
// mirror B→A at once, each direction counted apart (its own receiver,
// its own streams), each 0 lost at a rate the router carries.
func TestDeviceBidirThroughRouter(t *testing.T) {
	r := newRouter(t, netns.RouterOptions{})
	out, stderr, code := run(t, t.TempDir(), "send", "--netns", r.Ports, "-i", r.A.Port, "--src-ip", r.A.Addr4.String(), "--gateway", r.A.Gateway4.String(),
		"--rx-netns", r.Ports, "--rx-interface", r.B.Port, "--rx-src-ip", r.B.Addr4.String(), "--rx-gateway", r.B.Gateway4.String(),
		"--bidir", "--count", "20000", "--rate", "10kpps", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	rep := decodePair(t, out)
	if len(rep.Directions) != 2 || rep.Frames != 40000 {
		t.Fatalf("%d directions, %d frames; want 2 and 40000\n%s", len(rep.Directions), rep.Frames, out)
	}
	for i, d := range rep.Directions {
		v := d.Verification
		want := [2]string{"A→B", "B→A"}[i]
		from, to := [2]string{r.A.Port, r.B.Port}[i], [2]string{r.B.Port, r.A.Port}[i]
		if d.Direction != want || d.From != from || d.To != to || d.Frames != 20000 || v.Frames != 20000 || v.Lost != 0 || v.WrongStream != 0 || d.Verdict != "pass" {
			t.Errorf("direction %d: %+v; want %s %s → %s, 20000 sent and received, 0 lost, pass", i, d, want, from, to)
		}
		// Each receiver counted its direction's stream only: A→B's is
		// stream 0, its mirror stream 1.
		if len(v.Streams) != 1 || v.Streams[0].Stream != i || v.Latency == nil || v.JitterNs <= 0 {
			t.Errorf("direction %s: streams %+v, latency %+v, jitter %d", want, v.Streams, v.Latency, v.JitterNs)
		}
		t.Logf("%s: %d sent, %d received, %d lost, latency p50 %d ns p99 %d ns, jitter %d ns", d.Direction, d.Frames, v.Frames, v.Lost, v.Latency.P50, v.Latency.P99, v.JitterNs)
	}
	if v := rep.Verification; v.Frames != 40000 || v.Lost != 0 {
		t.Errorf("both receivers: %+v, want 40000 received, 0 lost", v)
	}
	// Each direction's receiver comes with the histogram behind its
	// latency, so that reports merge exactly (wpg report merge).
	var raw struct {
		Verification map[string]json.RawMessage   `json:"verification"`
		Directions   []map[string]json.RawMessage `json:"directions"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Verification["latency_histogram"] == nil {
		t.Errorf("verification without latency_histogram")
	}
	for _, d := range raw.Directions {
		var v map[string]json.RawMessage
		if err := json.Unmarshal(d["verification"], &v); err != nil || v["latency_histogram"] == nil {
			t.Errorf("direction %s: verification without latency_histogram (%v)", d["direction"], err)
		}
	}
	// wpg report merge merges the directions exactly: the report with
	// itself (as two receivers of one job) doubles every count and keeps
	// every percentile (the same values twice).
	dir := t.TempDir()
	for _, name := range []string{"a.json", "b.json"} { // two files: the same file twice is refused
		if err := os.WriteFile(filepath.Join(dir, name), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mout, merr, code := run(t, dir, "report", "merge", "a.json", "b.json")
	if code != 0 {
		t.Fatalf("wpg report merge: exit %d: %s", code, merr)
	}
	m := decodePair(t, mout)
	if len(m.Directions) != 2 || len(m.Ports) != 2*len(rep.Ports) {
		t.Fatalf("merged: %d directions, %d ports; want 2 and %d", len(m.Directions), len(m.Ports), 2*len(rep.Ports))
	}
	for i, d := range m.Directions {
		o := rep.Directions[i]
		if d.Direction != o.Direction || d.Frames != 2*o.Frames || d.Verification.Frames != 2*o.Verification.Frames || d.Verdict != "pass" ||
			d.Verification.Latency == nil || *d.Verification.Latency != *o.Verification.Latency {
			t.Errorf("merged direction %d: %+v latency %+v; want %s with twice %d frames, pass, latency %+v", i, d, d.Verification.Latency, o.Direction, o.Frames, o.Verification.Latency)
		}
	}
}

// Issue #26: wpg's RFC 3550 jitter J of a stream sent with a pattern of
// gaps (bursts of 8 frames 50 µs apart, 2 ms between bursts) over a veth
// is within 5 % of J computed independently from tcpdump's time stamps of
// the same frames and their signatures' transmit times.
func TestJitterAgainstCapture(t *testing.T) {
	testbed.RequireTool(t, "tcpdump", "tcpdump")
	v := testbed.NewVeth(t)
	dir := t.TempDir()
	tpl := filepath.Join(dir, "gaps.wpg.yaml")
	if err := os.WriteFile(tpl, []byte("streams:\n  - name: gaps\n    rate: 20kpps\n    burst: {frames: 8, count: 500, gap: 2ms}\n    ipv4: {}\n    udp: {dst: 9}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pcap := filepath.Join(dir, "gaps.pcap")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	capt := v.Command(ctx, "tcpdump", "-i", v.Inner, "-w", pcap, "--time-stamp-precision=nano", "-B", "65536", "-U", "-s", "128", "udp")
	var capErr syncbuf.Buffer
	capt.Stderr = &capErr
	if err := capt.Start(); err != nil {
		t.Fatalf("tcpdump: %v", err)
	}
	defer func() { _ = capt.Process.Kill(); _ = capt.Wait() }()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(capErr.String(), "listening on"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("tcpdump did not start: %s", capErr.String())
		}
	}
	out, stderr, code := run(t, dir, "send", tpl, "-i", v.Outer, "--rx-netns", v.NS, "--rx-interface", v.Inner, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	rep := decodePair(t, out)
	if rep.Verification.Frames != 4000 || len(rep.Verification.Streams) != 1 {
		t.Fatalf("received %+v, want 4000 frames of one stream", rep.Verification)
	}
	var recs []capRecord
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if recs = readSigned(t, pcap); len(recs) >= 4000 || time.Now().After(deadline) {
			break
		}
	}
	_ = capt.Process.Signal(os.Interrupt)
	_ = capt.Wait()
	if recs = readSigned(t, pcap); len(recs) != 4000 {
		t.Fatalf("captured %d signed frames, want 4000", len(recs))
	}
	// RFC 3550 A.8, independently of wpg: transit = capture time less
	// the signature's transmit time (their clocks' offset cancels in D),
	// in the order captured.
	var j float64
	for i := 1; i < len(recs); i++ {
		d := float64((recs[i].rx - recs[i].tx) - (recs[i-1].rx - recs[i-1].tx))
		j += (math.Abs(d) - j) / 16
	}
	got := float64(rep.Verification.Streams[0].JitterNs)
	t.Logf("J: wpg %.0f ns, from the capture %.0f ns (%.2f %% apart)", got, j, 100*math.Abs(got-j)/j)
	if !(j > 0) || math.Abs(got-j) > 0.05*j {
		t.Fatalf("wpg's J %.0f ns, the capture's %.0f ns: more than 5 %% apart", got, j)
	}
}

// capRecord is a captured signed frame: its capture time and its
// signature's transmit time (ns, their own clocks).
type capRecord struct{ rx, tx int64 }

// readSigned reads a capture's signed frames in the order captured.
func readSigned(t *testing.T, path string) []capRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		return nil // not written yet
	}
	var recs []capRecord
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			return recs
		}
		if sig, ok := frame.ParseSignature(data); ok {
			recs = append(recs, capRecord{rx: ci.Timestamp.UnixNano(), tx: sig.TxNs})
		}
	}
}

// Issue #26's bad input: a gateway that never answers, an address outside
// the port's subnet, --bidir with a template that cannot be mirrored, the
// receiving port equal to the sending one: each one line naming the input
// and the fix, and nothing sent.
func TestDeviceBadInput(t *testing.T) {
	r := newRouter(t, netns.RouterOptions{})
	dir := t.TempDir()
	arp := filepath.Join(dir, "arp.wpg.yaml")
	if err := os.WriteFile(arp, []byte("streams: [{name: who, arp: {}}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ports := []string{"--netns", r.Ports, "-i", r.A.Port, "--rx-netns", r.Ports, "--count", "1000"}
	for _, c := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"gateway never answers", []string{"--src-ip", r.A.Addr4.String(), "--gateway", "198.18.0.99", "--rx-interface", r.B.Port}, 1,
			[]string{"port " + r.A.Port, "gateway 198.18.0.99 did not answer ARP within 3s", "check that the device is up and holds 198.18.0.99"}},
		{"gateway never answers (IPv6)", []string{repoFile(t, "examples/router6.wpg.yaml"), "--src-ip", r.A.Addr6.String(), "--gateway", "2001:2:0:a::99", "--rx-interface", r.B.Port}, 1,
			[]string{"gateway 2001:2:0:a::99 did not answer Neighbor Discovery within 3s", "check"}},
		{"outside the subnet", []string{"--src-ip", r.A.Addr4.String(), "--gateway", r.B.Gateway4.String(), "--rx-interface", r.B.Port}, 2,
			[]string{"--gateway 198.19.0.254: is outside the port's subnet 198.18.0.0/24", "give the device's address on that link"}},
		{"no mirror", []string{arp, "--rx-interface", r.B.Port, "--bidir"}, 2,
			[]string{`stream "who" cannot be mirrored`, "it carries ARP", "reverse:", "drop --bidir"}},
		{"same port", []string{"--rx-interface", r.A.Port}, 2,
			[]string{"--rx-interface " + r.A.Port + ": is the sending port", "receive on the device's other port"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			out, stderr, code := run(t, dir, append([]string{"send"}, append(ports, c.args...)...)...)
			line := strings.TrimSpace(stderr)
			if code != c.code || strings.Contains(line, "\n") || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and one line", code, out, stderr, c.code)
			}
			for _, w := range c.want {
				if !strings.Contains(line, w) {
					t.Errorf("%q lacks %q", line, w)
				}
			}
			t.Logf("%s (%s)", line, time.Since(start).Round(time.Millisecond))
		})
	}
}

// docs/recipes.md, "Test a firewall rule": a rule on the router drops one
// of two streams; the run fails its check (exit 3), the allowed stream
// arrived whole, and the report names the stream that never arrived.
func TestDeviceFirewallRule(t *testing.T) {
	testbed.RequireTool(t, "nft", "nftables")
	r := newRouter(t, netns.RouterOptions{})
	ctx := context.Background()
	for _, rule := range [][]string{
		{"add", "table", "inet", "fw"},
		{"add", "chain", "inet", "fw", "transit", "{ type filter hook forward priority 0; policy accept; }"},
		{"add", "rule", "inet", "fw", "transit", "udp", "dport", "7", "drop"},
	} {
		if out, err := r.RouterCommand(ctx, "nft", rule...).CombinedOutput(); err != nil {
			t.Fatalf("nft %v: %v: %s", rule, err, out)
		}
	}
	dir := t.TempDir()
	tpl := filepath.Join(dir, "fw.wpg.yaml")
	if err := os.WriteFile(tpl, []byte(`streams:
  - {name: allowed, ipv4: {src: 198.18.0.1, dst: 198.19.0.1}, udp: {dst: 9}}
  - {name: blocked, ipv4: {src: 198.18.0.1, dst: 198.19.0.1}, udp: {dst: 7}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := run(t, dir, "send", tpl, "--netns", r.Ports, "-i", r.A.Port, "--src-ip", r.A.Addr4.String(), "--gateway", r.A.Gateway4.String(),
		"--rx-netns", r.Ports, "--rx-interface", r.B.Port, "--rx-src-ip", r.B.Addr4.String(), "--count", "4000", "--rate", "10kpps", "--json")
	if code != 3 {
		t.Fatalf("exit %d, want 3 (the check failed): %s\n%s", code, stderr, out)
	}
	rep := decodePair(t, out)
	v := rep.Verification
	if len(v.Streams) != 1 || v.Streams[0].Stream != 0 || v.Streams[0].Frames != 2000 || v.Lost != 0 {
		t.Fatalf("received %+v; want stream 0's 2000 frames only", v)
	}
	if d := rep.Directions[0].Verdict; !strings.Contains(d, "2000 of 4000 sent frames never arrived") {
		t.Errorf("verdict %q", d)
	}
	found := false
	for _, n := range rep.Notes {
		found = found || strings.Contains(n, "stream 1 (blocked): 2000 sent, none arrived on "+r.B.Port)
	}
	if !found {
		t.Errorf("no note names the blocked stream: %q", rep.Notes)
	}
}
