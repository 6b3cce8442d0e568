package report_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/report"
)

func sample() *report.Report {
	return &report.Report{
		Schema: report.Schema, Command: "send", Template: "examples/udp64.wpg.yaml",
		Backend: backend.Info{Backend: "afpacket", Mode: "tx-ring", Interface: "veth0", NUMANode: -1, RingDepth: 1024},
		Plan:    "prerender", Batch: 64,
		Frames: 1000000, Bytes: 64000000, Seconds: 1, PPS: 1e6, BPS: 512e6, BPSLayer: "l2", FrameSize: 64,
		Rate: "1Mpps", TargetPPS: 1e6, AchievedRatio: 1, Wait: "hybrid", Clock: "tsc", TSC: true,
		LatenessMaxNs: 12000, LatenessMeanNs: 800, LatenessP50Ns: 60, LatenessP99Ns: 4000,
		Stop: "duration", CPUSeconds: 0.5,
		Workers:      []report.Worker{{Worker: 0, CPU: 1, NUMANode: -1, Frames: 1000000, Bytes: 64000000, Seconds: 1, PPS: 1e6}},
		Verification: json.RawMessage(`{"frames":1000000,"lost":0,"duplicated":0,"reordered":0,"corrupted":0,"latency":{"p50_ns":20000,"p99_ns":90000,"max_ns":400000}}`),
	}
}

func ExampleReport_WriteTable() {
	sample().WriteTable(os.Stdout)
	// Output:
	// wpg send examples/udp64.wpg.yaml
	// backend     afpacket on veth0, mode tx-ring
	// ring depth  1024 (effective)
	// NUMA node   unknown (veth0 reports none: virtual device or one-node machine)
	// plan        prerender
	// workers     1, batch 64
	// frames      1000000 (64.0 bytes mean)
	// bytes       64000000
	// seconds     1.000
	// rate        1.000 M pps, 512.000 Mbit/s (L2)
	// target      1Mpps = 1.000 M pps, achieved 100.00 % (wait hybrid)
	// lateness    max 12µs, mean 800ns, p50 60ns, p99 4µs
	// clock       tsc
	// cpu         0.50 s (0.50 of a core)
	// stop        duration
	// receiver    1000000 frames received, 0 lost, 0 duplicated, 0 reordered, 0 corrupted; latency p50 20µs, p99 90µs, max 400µs
}

func TestJSONFieldsOfSchemaV1(t *testing.T) {
	var buf bytes.Buffer
	if err := sample().WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	// The documented fields of docs/report.md that a consumer relies on.
	for _, k := range []string{"schema", "command", "backend", "plan", "batch", "frames", "bytes", "seconds", "pps", "bps",
		"bps_layer", "frame_size", "rate", "target_pps", "achieved_ratio", "wait", "clock", "tsc", "lateness_max_ns",
		"lateness_mean_ns", "lateness_p50_ns", "lateness_p99_ns", "p50_jitter", "p99_jitter", "stop", "workers", "verification", "cpu_seconds"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON report lacks %q", k)
		}
	}
	if m["schema"] != "wpg.report/v2" {
		t.Fatalf("schema %v", m["schema"])
	}
}

func TestSI(t *testing.T) {
	for v, want := range map[float64]string{0: "0.0 pps", 999: "999.0 pps", 1500: "1.500 kpps", 2.5e6: "2.500 Mpps", 1e10: "10.000 Gpps"} {
		if got := report.SI(v, "pps"); got != want {
			t.Errorf("SI(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestPayloadPathsInBytesPerSecond: local paths (shm, pipes) are reported
// in frames/s and bytes per second of payload, not in "Gbit/s (L2)".
func TestPayloadPathsInBytesPerSecond(t *testing.T) {
	r := &report.Report{
		Schema: report.Schema, Command: "bench",
		Backend: backend.Info{Backend: "shm", Mode: "inplace", NUMANode: -1},
		Plan:    "payload", Batch: 16, Frames: 1000, Bytes: 1000 * (1<<20 + 32), Seconds: 0.5,
		PPS: 2000, BPS: 8 * 2000 * (1<<20 + 32), BPSLayer: "l2", FrameSize: 1<<20 + 32,
		Payload: true, PayloadBytes: 1000 << 20, PayloadBytesPerSecond: 2000 << 20,
		Workers: []report.Worker{{Worker: 0, CPU: -1, NUMANode: -1, Frames: 1000}},
	}
	var buf bytes.Buffer
	r.WriteTable(&buf)
	out := buf.String()
	for _, want := range []string{"2.000 k frames/s, 2.097 GB/s of payload", "(1048576000 of payload)"} {
		if !bytes.Contains(buf.Bytes(), []byte(want)) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if bytes.Contains(buf.Bytes(), []byte("bit/s")) {
		t.Errorf("a payload path reported in bit/s:\n%s", out)
	}
	buf.Reset()
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m["payload"] != true || m["payload_bytes_per_second"] != float64(2000<<20) || m["bps"] == nil {
		t.Errorf("JSON: payload %v, payload_bytes_per_second %v, bps %v", m["payload"], m["payload_bytes_per_second"], m["bps"])
	}
	// Network paths keep their bit rate.
	buf.Reset()
	sample().WriteTable(&buf)
	if !bytes.Contains(buf.Bytes(), []byte("Mbit/s (L2)")) || bytes.Contains(buf.Bytes(), []byte("of payload")) {
		t.Errorf("network report:\n%s", buf.String())
	}
}

// A port's line in the text report shows its VLAN tags, outer first, as
// its JSON's vlan_tags; an untagged port's line shows none.
func TestPortLineShowsVLANTags(t *testing.T) {
	r := &report.Report{Schema: report.Schema, Command: "send", Ports: []report.Port{
		{Role: "tx", Interface: "a0", Address: "198.18.1.1/24", Gateway: "198.18.1.254", GatewayMAC: "02:00:00:00:00:02", Answered: 1,
			VLANTags: []report.VLANTag{{TPID: "0x88a8", ID: 10}, {TPID: "0x8100", ID: 100}}},
		{Role: "rx", Interface: "b0", Address: "198.19.1.1/24", Answered: 2},
	}}
	var buf bytes.Buffer
	r.WriteTable(&buf)
	out := buf.String()
	var tx, rx string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "port tx"):
			tx = l
		case strings.HasPrefix(l, "port rx"):
			rx = l
		}
	}
	if !strings.Contains(tx, "at 02:00:00:00:00:02; tagged 802.1ad 10 + 802.1Q 100; answered 1 request") {
		t.Errorf("port tx line %q; want its tags after the gateway\n%s", tx, out)
	}
	if rx == "" || strings.Contains(rx, "tagged") {
		t.Errorf("port rx line %q; want one without tags\n%s", rx, out)
	}
	buf.Reset()
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(compact.String(), `"vlan_tags":[{"tpid":"0x88a8","id":10},{"tpid":"0x8100","id":100}]`) {
		t.Errorf("JSON %s; want the tx port's vlan_tags", compact.String())
	}
	if strings.Count(compact.String(), "vlan_tags") != 1 {
		t.Errorf("JSON %s; want no vlan_tags on the untagged port", compact.String())
	}
}
