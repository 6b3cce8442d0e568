//go:build linux

package e2e

import (
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/pcapgo"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/testbed"
)

// streamsTemplate has a continuous stream, bursts with a start delay, and
// one burst at a bit rate (issue #15, item 3).
const streamsTemplate = `
streams:
  - name: steady
    rate: 2kpps
    count: 200
    ipv4: {}
    udp: {dst: 9}
  - name: bursts
    rate: 50kpps
    delay: 10ms
    burst: {frames: 20, count: 5, gap: 5ms}
    ipv4: {}
    udp: {dst: 10}
  - name: once
    rate: 8Mbps
    delay: 30ms
    burst: {frames: 50}
    size: 100
    ipv4: {}
    udp: {dst: 11}
`

// streamsReport is the part of the send report these tests read.
type streamsReport struct {
	Frames  uint64 `json:"frames"`
	Rate    string `json:"rate"`
	Streams []struct {
		Stream int    `json:"stream"`
		Name   string `json:"name"`
		Frames uint64 `json:"frames"`
		Rate   string `json:"rate"`
		Mode   string `json:"mode"`
	} `json:"streams"`
}

var streamsCounts = []uint64{200, 100, 50}

func checkStreamsReport(t *testing.T, out string) {
	t.Helper()
	var rep streamsReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}
	if rep.Frames != 350 || rep.Rate != "per stream" || len(rep.Streams) != 3 {
		t.Fatalf("report %+v", rep)
	}
	for i, s := range rep.Streams {
		if s.Stream != i || s.Frames != streamsCounts[i] {
			t.Errorf("report stream %d: %+v, want %d frames", i, s, streamsCounts[i])
		}
	}
	if rep.Streams[1].Mode != "5 bursts of 20 frames, gap 5ms" || rep.Streams[2].Mode != "one burst of 50 frames" || rep.Streams[2].Rate != "8Mbps" {
		t.Errorf("report streams %+v", rep.Streams)
	}
}

// TestStreamRatesOnPcapTimestamps: each stream's frames in the capture are
// spaced at its own rate, the bursts by their gap, each within 5 %, and
// every stream starts after its delay; the report counts each stream.
func TestStreamRatesOnPcapTimestamps(t *testing.T) {
	dir := t.TempDir()
	tpl := filepath.Join(dir, "streams.wpg.yaml")
	if err := os.WriteFile(tpl, []byte(streamsTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := run(t, dir, "send", tpl, "--backend", "pcapfile", "-o", "s.pcap", "--json")
	if code != 0 {
		t.Fatalf("send: exit %d: %s", code, errs)
	}
	checkStreamsReport(t, out)
	f, err := os.Open(filepath.Join(dir, "s.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	ts := map[uint16][]int64{}
	var t0 int64
	for {
		data, ci, err := r.ReadPacketData()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		sig, ok := frame.ParseSignature(data)
		if !ok {
			t.Fatal("unsigned frame")
		}
		if t0 == 0 {
			t0 = ci.Timestamp.UnixNano()
		}
		ts[sig.Stream] = append(ts[sig.Stream], ci.Timestamp.UnixNano()-t0)
	}
	within := func(what string, got, want int64) {
		t.Helper()
		if d := float64(got-want) / float64(want); d < -0.05 || d > 0.05 {
			t.Errorf("%s: %d ns, want %d ±5 %%", what, got, want)
		}
	}
	for s, n := range streamsCounts {
		if uint64(len(ts[uint16(s)])) != n {
			t.Fatalf("stream %d: %d frames, want %d", s, len(ts[uint16(s)]), n)
		}
	}
	for k := 1; k < 200; k++ {
		within("steady gap", ts[0][k]-ts[0][k-1], 500_000)
	}
	within("bursts start", ts[1][0], 10_000_000)
	for k := 1; k < 100; k++ {
		want := int64(20_000)
		if k%20 == 0 {
			want = 5_000_000 // the gap from the last frame of a burst
		}
		within("bursts gap", ts[1][k]-ts[1][k-1], want)
	}
	within("once start", ts[2][0], 30_000_000)
	for k := 1; k < 50; k++ {
		within("once gap", ts[2][k]-ts[2][k-1], 100_000) // 8 Mbit/s of 100-byte frames
	}
}

// TestStreamRatesOverVeth: over a veth pair into wpg recv, every stream's
// frames arrive, exactly its count, and the send report says the same.
func TestStreamRatesOverVeth(t *testing.T) {
	v := testbed.NewVeth(t)
	waitCarrier(t, v.Outer)
	dir := t.TempDir()
	tpl := filepath.Join(dir, "streams.wpg.yaml")
	if err := os.WriteFile(tpl, []byte(streamsTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, workers := range []string{"1", "2"} {
		r := startRecv(t, v, "--expect", "350", "--idle-timeout", "5s")
		out, errs, code := run(t, dir, "send", tpl, "-i", v.Outer, "--json", "--workers", workers)
		if code != 0 {
			t.Fatalf("send: exit %d: %s", code, errs)
		}
		checkStreamsReport(t, out)
		res, code := r.wait(t)
		if code != 0 || res.Frames != 350 || res.Lost != 0 || res.Duplicated != 0 || res.Corrupted != 0 || len(res.Streams) != 3 {
			t.Fatalf("workers %s: exit %d, %+v\nsend report: %s", workers, code, res, out)
		}
		for i, s := range res.Streams {
			if s.Frames != streamsCounts[i] || s.Lost != 0 {
				t.Errorf("workers %s: received stream %d: %+v, want %d frames", workers, i, s, streamsCounts[i])
			}
		}
	}
}

// waitCarrier waits until iface is operationally up: until the kernel's
// link watch has seen the carrier and attached the qdisc, a new veth drops
// what is sent on it (on a busy host, for tens of milliseconds).
func waitCarrier(t *testing.T, iface string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile("/sys/class/net/" + iface + "/operstate")
		if err == nil && strings.TrimSpace(string(b)) == "up" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not up after 10 s (operstate %q, %v)", iface, b, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRateShareOfTheLink: --rate 50% needs an interface whose speed is
// known; none at all is refused, naming why; a veth's nominal speed is
// taken, and the report says it was nominal (issue #28: TRex's -m 50%).
func TestRateShareOfTheLink(t *testing.T) {
	v := testbed.NewVeth(t)
	dir := t.TempDir()
	// On the veth (afpacket), and on null, where -i only gives the speed
	// (issue #28: wpg send --backend null --rate 50% -i VETH).
	for _, backend := range []string{"afpacket", "null"} {
		out, errs, code := run(t, dir, "send", "--backend", backend, "--rate", "50%", "-i", v.Outer, "--count", "10", "--json")
		var rep struct {
			Frames    uint64
			TargetPPS float64 `json:"target_pps"`
			Notes     []string
		}
		// Half of 10000 Mb/s in the default template's 64-byte frames,
		// counted at layer 1 (88 B).
		if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Frames != 10 || math.Abs(rep.TargetPPS-5e9/(8*88)) > 1 || !strings.Contains(strings.Join(rep.Notes, "\n"), "nominal") {
			t.Errorf("--backend %s --rate 50%% -i %s (a veth): exit %d, %s, %s; want 10 frames and a note that the speed is nominal", backend, v.Outer, code, out, errs)
		}
	}
	if _, errs, code := run(t, dir, "send", "--backend", "null", "-i", v.Outer, "--count", "10"); code != 2 || !strings.Contains(errs, "not to null") {
		t.Errorf("--backend null -i without a share of the link: exit %d, %s; want -i refused", code, errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate", "50%", "-i", "lo", "--count", "10"}, "reports no link speed"},
		{[]string{"--rate", "50%", "--count", "10"}, "no interface to take the speed from"},
		{[]string{"--rate", "150%", "-i", "lo"}, "at most 100%"},
	} {
		_, errs, code := run(t, dir, append([]string{"send"}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) || !strings.Contains(errs, "--rate") {
			t.Errorf("%v: exit %d, %s; want exit 2 and …%s…", c.args, code, errs, c.want)
		}
	}
	// A template whose streams keep their own rates takes no --rate.
	tpl := filepath.Join(dir, "s.wpg.yaml")
	os.WriteFile(tpl, []byte(streamsTemplate), 0o644)
	if _, errs, code := run(t, dir, "send", tpl, "--rate", "1kpps"); code != 2 || !strings.Contains(errs, "keep their own schedules") {
		t.Errorf("timed template with --rate: exit %d, %s", code, errs)
	}
	// The rate-control options apply to it without one.
	if _, errs, code := run(t, dir, "send", tpl, "--wait", "spin", "--count", "5"); code != 0 {
		t.Errorf("timed template with --wait spin: exit %d, %s", code, errs)
	}
}
