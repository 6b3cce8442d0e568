//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/hdrlog"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/internal/testbed"
	"github.com/wpg-dev/wpg/recv"
)

// TestReplayedCaptureReportsItsTrueLatency (issue #29): a capture of
// wpg's frames replayed later keeps their transmit times, so they arrive
// as late as the capture is old. The receiver's latency summary read the
// histogram's 100 s bound (max_ns 100,059,316,223 beside a stream's
// 2,704,554,505,801); it reports what it measured. The capture's frames
// were "sent" at 1 ns of CLOCK_MONOTONIC, so their latency is the
// machine's time since boot (minutes at least, where tests run).
func TestReplayedCaptureReportsItsTrueLatency(t *testing.T) {
	const n = 10
	dir := t.TempDir()
	var recs []testbed.PcapRecord
	for i := range n {
		f := make([]byte, 60)
		copy(f, []byte{0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x88, 0xb5}) // local experimental EtherType: no checksum to keep
		frame.PutSignature(f, frame.Signature{Stream: 2, Seq: uint64(i), Workers: 1, TxNs: 1})
		recs = append(recs, testbed.PcapRecord{Data: f, At: time.Duration(i) * time.Millisecond})
	}
	capture := filepath.Join(dir, "old.pcap")
	testbed.WritePcap(t, capture, 65535, false, recs)
	v := testbed.NewVeth(t)
	before := sys.MonotonicNs()
	r := startRecv(t, v, "--expect", "10", "--idle-timeout", "10s")
	if _, errs, code := run(t, dir, "send", "--pcap", capture, "-i", v.Outer); code != 0 {
		t.Fatalf("wpg send --pcap: exit %d: %s", code, errs)
	}
	res, code := r.wait(t)
	after := sys.MonotonicNs()
	if code != 0 || res.Frames != n || res.Latency == nil || len(res.Streams) != 1 {
		t.Fatalf("exit %d, report %+v\nstderr: %s", code, res, r.errb.String())
	}
	l, s := res.Latency, res.Streams[0]
	if l.MaxNs < before || l.MaxNs > after || l.MaxNs != s.LatencyMaxNs || l.MinNs != s.LatencyMinNs {
		t.Errorf("latency max %d (min %d), stream's max %d (min %d): want the time since boot, %d to %d", l.MaxNs, l.MinNs, s.LatencyMaxNs, s.LatencyMinNs, before, after)
	}
	if l.P50Ns < l.MinNs || l.P99Ns > l.MaxNs || l.P50Ns < before-before/1000 {
		t.Errorf("latency p50 %d p99 %d outside %d … %d", l.P50Ns, l.P99Ns, l.MinNs, l.MaxNs)
	}
	t.Logf("a capture replayed %v after its frames' transmit time: latency max %v, p50 %v", time.Duration(before), time.Duration(l.MaxNs), time.Duration(l.P50Ns))
}

// TestRecvDurationWithNoSender (issue #29): `wpg recv --duration 1s` on a
// local path's socket, or on a FIFO, with no sender ran until killed
// (the FIFO's even past Ctrl-C); it ends at its duration, stopped by
// "duration" with nothing received, and says that no sender came.
func TestRecvDurationWithNoSender(t *testing.T) {
	dir := t.TempDir()
	for _, where := range [][]string{
		{"--backend", "shm", "--listen", filepath.Join(dir, "rx.sock")},
		{"--backend", "pipe", "--fifo", filepath.Join(dir, "rx.fifo")},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, testbed.Wpg(t), append([]string{"recv", "--duration", "1s", "--json"}, where...)...)
		out, errs, code := runCmd(t, cmd)
		if ctx.Err() != nil {
			t.Fatalf("%v: wpg recv --duration 1s with no sender still ran after a minute", where)
		}
		cancel()
		var res recv.Result
		if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || res.Stop != "duration" || res.Frames != 0 {
			t.Errorf("%v: exit %d, report %+v (%v)\nstderr: %s", where, code, res, err, errs)
		}
		if !strings.Contains(errs, "no sender came to") || !strings.Contains(errs, "within --duration 1s") {
			t.Errorf("%v: stderr %q does not say that no sender came", where, errs)
		}
	}
}

// TestRecvListsCorruptedOnlyStreams (issue #29): the receiver's table
// lists every stream a frame named, those of which only corrupted frames
// arrived too: examples/bad-checksums.wpg.yaml sends four streams whose
// every frame has a bad checksum and one without a UDP checksum (valid).
func TestRecvListsCorruptedOnlyStreams(t *testing.T) {
	v := testbed.NewVeth(t)
	r := startRecv(t, v, "--idle-timeout", "2s")
	if _, errs, code := run(t, t.TempDir(), "send", repoFile(t, "examples/bad-checksums.wpg.yaml"), "-i", v.Outer, "--count", "500", "--rate", "20kpps"); code != 0 {
		t.Fatalf("wpg send: exit %d: %s", code, errs)
	}
	res, _ := r.wait(t)
	if res.Corrupted != 400 || res.Frames != 100 || len(res.Streams) != 5 {
		t.Fatalf("corrupted %d, frames %d, streams %+v\nstderr: %s", res.Corrupted, res.Frames, res.Streams, r.errb.String())
	}
	for i, s := range res.Streams {
		want := recv.StreamResult{Stream: uint16(i), Corrupted: 100}
		if i == 4 {
			want = recv.StreamResult{Stream: 4, Frames: 100}
		}
		if s.Stream != want.Stream || s.Frames != want.Frames || s.Corrupted != want.Corrupted {
			t.Errorf("stream %d: %d frames, %d corrupted; want %d, %d", s.Stream, s.Frames, s.Corrupted, want.Frames, want.Corrupted)
		}
	}
}

// TestNDRRateLayer (issue #29): wpg ndr counted bit rates at L1 and wpg
// send at L2; one convention now, l2 unless --rate-layer l1, which reads
// --max-rate there too, and the report says which (bps_layer).
// throughput_bps_l1 keeps the L1 figure whatever the layer.
func TestNDRRateLayer(t *testing.T) {
	testbed.RequireRoot(t)
	testbed.RequireTool(t, "ip", "iproute2")
	for _, c := range []struct {
		layer    string
		bytes    float64 // bits a 64-byte frame counts, / 8
		maxRate  float64 // --max-rate 20Mbps in frames/s
		tableCol string
	}{{"", 60, 20e6 / (60 * 8), "L2 bit rate"}, {"l1", 84, 20e6 / (84 * 8), "L1 bit rate"}} {
		args := []string{"ndr", "--sizes", "64", "--trial", "200ms", "--warmup", "0s", "--resolution", "50%", "--max-rate", "20Mbps", "--max-trials", "2"}
		if c.layer != "" {
			args = append(args, "--rate-layer", c.layer)
		}
		out, stderr, code := run(t, t.TempDir(), append(args, "--json")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var rep struct {
			Layer string `json:"bps_layer"`
			Sizes []struct {
				Throughput float64 `json:"throughput_pps"`
				BPS        float64 `json:"throughput_bps"`
				L1         float64 `json:"throughput_bps_l1"`
				MaxRate    float64 `json:"max_rate_pps"`
			} `json:"sizes"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Sizes) != 1 {
			t.Fatalf("%v\n%s", err, out)
		}
		s := rep.Sizes[0]
		want := map[string]string{"": "l2", "l1": "l1"}[c.layer]
		if rep.Layer != want || math.Abs(s.MaxRate-c.maxRate) > 1 || math.Abs(s.BPS-s.Throughput*c.bytes*8) > 1e-6*s.BPS || math.Abs(s.L1-s.Throughput*84*8) > 1e-6*s.L1 {
			t.Errorf("--rate-layer %q: bps_layer %q, max rate %.0f frames/s (want %.0f), throughput %.0f frames/s = %.0f bit/s (l1 %.0f)", c.layer, rep.Layer, s.MaxRate, c.maxRate, s.Throughput, s.BPS, s.L1)
		}
		if c.layer == "l1" {
			table, _, _ := run(t, t.TempDir(), args...)
			if !strings.Contains(table, c.tableCol) {
				t.Errorf("the table does not say %q:\n%s", c.tableCol, table)
			}
		}
	}
}

// TestRecvJSONStream (issue #29): wpg recv --json-stream prints a start
// event, an interval event per --interval and the end event with its
// report, each one JSON object a line, as the frames come; --hdr-out with
// --interval logs the one-way latency of each interval, and they add up
// to every frame's.
func TestRecvJSONStream(t *testing.T) {
	wpg := testbed.Wpg(t)
	dir := t.TempDir()
	sock, hdr := filepath.Join(dir, "rx.sock"), filepath.Join(dir, "latency.hdr")
	rx := exec.Command(wpg, "recv", "--backend", "shm", "--listen", sock, "--interval", "200ms", "--json-stream", "--hdr-out", hdr)
	var rout, rerr strings.Builder
	rx.Stdout, rx.Stderr = &rout, &rerr
	if err := rx.Start(); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := run(t, dir, "send", "--backend", "shm", "--connect", sock, "--size", "1KiB", "--rate", "5kpps", "--duration", "900ms"); code != 0 {
		rx.Process.Kill()
		t.Fatalf("wpg send: exit %d: %s", code, errs)
	}
	if err := rx.Wait(); err != nil {
		t.Fatalf("wpg recv: %v: %s", err, rerr.String())
	}
	lines := strings.Split(strings.TrimRight(rout.String(), "\n"), "\n")
	var events []string
	var frames, endFrames uint64
	for i, line := range lines {
		var ev struct {
			Event string `json:"event"`
			Data  struct {
				Frames uint64 `json:"frames"`
				Schema string `json:"schema"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %d is not JSON: %v: %q", i+1, err, line)
		}
		events = append(events, ev.Event)
		switch ev.Event {
		case "interval":
			frames += ev.Data.Frames
		case "end":
			endFrames = ev.Data.Frames
		}
	}
	n := len(events)
	if n < 5 || events[0] != "start" || events[n-1] != "end" || frames != endFrames || endFrames == 0 {
		t.Fatalf("events %v; intervals' frames %d, the end's %d\n%s", events, frames, endFrames, rout.String())
	}
	f, err := os.Open(hdr)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	logged, err := hdrlog.Read(f)
	var samples int64
	for _, h := range logged {
		samples += h.TotalCount()
	}
	if err != nil || len(logged) != n-2 || samples != int64(endFrames) {
		t.Errorf("--hdr-out logged %d histograms of %d latencies for %d intervals of %d frames (%v)", len(logged), samples, n-2, endFrames, err)
	}
}
