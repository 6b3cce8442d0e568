package recv

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/frame"
)

// TestResultSchema: the report names its schema, as docs/recv.md says.
func TestResultSchema(t *testing.T) {
	r := NewTracker().Result()
	if r.Schema != "wpg.recv/v1" {
		t.Fatalf("schema %q", r.Schema)
	}
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"schema":"wpg.recv/v1"`) {
		t.Fatalf("JSON %s", b)
	}
}

// TestTableShowsBackendDetails: the text report carries the receiver's
// details that the JSON has (reads per frame on a pipe, kernel drops on
// afpacket).
func TestTableShowsBackendDetails(t *testing.T) {
	r := NewTracker().Result()
	r.Backend = &backend.Info{Backend: "pipe", Mode: "read", Details: map[string]string{"reads_per_frame": "1.250", "pipe_size": "1048576"}}
	var buf bytes.Buffer
	r.WriteTable(&buf)
	for _, want := range []string{"reads_per_frame", "1.250", "pipe_size"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
	r.Backend = &backend.Info{Backend: "afpacket", Details: map[string]string{"kernel_drops": "0"}}
	buf.Reset()
	r.WriteTable(&buf)
	if !strings.Contains(buf.String(), "kernel_drops") {
		t.Errorf("table lacks kernel_drops 0:\n%s", buf.String())
	}
}

// udpFrame is an intact signed UDP/IPv4 frame of stream 0.
func udpFrame(t *testing.T, seq uint64) []byte {
	eth := &layers.Ethernet{SrcMAC: srcMAC, DstMAC: dstMAC, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: src4, DstIP: dst4}
	p := make([]byte, 40)
	frame.PutSignature(p, frame.Signature{Stream: 0, Seq: seq})
	return build(t, eth, ip, &layers.UDP{SrcPort: 1, DstPort: 2}, gopacket.Payload(p))
}

// TestExpectCountsGenuineFramesOnly: frames with a wpg-looking signature
// whose checks fail (foreign garbage) do not count toward --expect:
// the loop waits for the genuine frames, and missing is computed from
// them.
func TestExpectCountsGenuineFramesOnly(t *testing.T) {
	var frames [][]byte
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 6 {
		g := udpFrame(t, 1000+uint64(i))
		g[30] ^= 0xff // destination address: the checksums fail
		frames = append(frames, g)
		junk := make([]byte, 64)
		for j := range junk {
			junk[j] = byte(rng.Uint32())
		}
		junk[12], junk[13] = 0x08, 0x00 // claims IPv4; the header does not check
		frame.PutSignature(junk, frame.Signature{Stream: 9, Seq: rng.Uint64() & frame.MaxSeq})
		frames = append(frames, junk)
	}
	for seq := range uint64(5) {
		frames = append(frames, udpFrame(t, seq))
	}
	r, err := Run(context.Background(), &sliceReceiver{frames: frames, eof: true}, DecodePacket, Options{Expect: 5, Batch: 4})
	if err != nil || r.Stop != "expect" || r.Frames != 5 || r.Corrupted != 12 || r.Missing != 0 {
		t.Fatalf("err=%v stop %q frames %d corrupted %d missing %d", err, r.Stop, r.Frames, r.Corrupted, r.Missing)
	}
	// Only 2 genuine frames arrive: the garbage does not hide the 3 missing.
	r, _ = Run(context.Background(), &sliceReceiver{frames: append(frames[:12:12], frames[12:14]...), eof: true}, DecodePacket, Options{Expect: 5})
	if r.Stop != "eof" || r.Frames != 2 || r.Missing != 3 || r.OK() {
		t.Fatalf("stop %q frames %d missing %d", r.Stop, r.Frames, r.Missing)
	}
}

// TestTrackerWorkersInterleaved: with W workers, worker j sends sequence
// numbers k ≡ j (mod W) in order; workers interleave at random, which is
// no reordering. A swap inside one worker's share still is (item 18).
func TestTrackerWorkersInterleaved(t *testing.T) {
	for _, w := range []int{2, 3, 256} {
		rng := rand.New(rand.NewPCG(uint64(w), 5))
		const per = 3000
		next := make([]uint64, w) // next index of each worker's share
		tr := NewTracker()
		for left := per * w; left > 0; {
			j := rng.IntN(w)
			// Workers drift apart by bursts of up to 64 frames.
			for b := rng.IntN(64); b >= 0 && next[j] < per; b-- {
				tr.ObserveSignature(frame.Signature{Stream: 1, Seq: next[j]*uint64(w) + uint64(j), Workers: w}, 0, 100)
				next[j]++
				left--
			}
		}
		r := tr.Result()
		if r.Frames != per*uint64(w) || r.Reordered != 0 || r.Lost != 0 || r.Duplicated != 0 || r.Corrupted != 0 || !r.OK() {
			t.Fatalf("%d workers interleaved: %+v", w, r)
		}
	}
	// Worker 1 of 2 swaps two of its frames (seq 3 and 5), and repeats one.
	tr := NewTracker()
	for _, seq := range []uint64{0, 1, 2, 5, 4, 3, 6, 7, 7} {
		tr.ObserveSignature(frame.Signature{Stream: 1, Seq: seq, Workers: 2}, 0, 100)
	}
	s := tr.Result().Streams[0]
	if s.Reordered != 1 || s.Lost != 0 || s.Duplicated != 1 || s.Frames != 8 || s.NextSeq != 8 {
		t.Fatalf("swap within a worker: %+v", s)
	}
	// A lost frame of one worker is lost even when the other has gone on.
	tr = NewTracker()
	for _, seq := range []uint64{0, 1, 3, 4, 5, 6, 8, 10} {
		tr.ObserveSignature(frame.Signature{Stream: 1, Seq: seq, Workers: 2}, 0, 100)
	}
	if s := tr.Result().Streams[0]; s.Lost != 1 || s.Reordered != 0 { // 2 (7 and 9 come after worker 1's last)
		t.Fatalf("loss within a worker: %+v", s)
	}
	// A frame claiming another worker count is not the stream's.
	tr.ObserveSignature(frame.Signature{Stream: 1, Seq: 11, Workers: 3}, 0, 100)
	if r := tr.Result(); r.Corrupted != 1 || r.Frames != 8 {
		t.Fatalf("worker-count mismatch: %+v", r)
	}
}

// TestRunTwoWorkerSignatures: frames rendered with the two-worker
// signature go through DecodePacket and Run without reordering reported.
func TestRunTwoWorkerSignatures(t *testing.T) {
	var frames [][]byte
	for k := range uint64(10) {
		// Worker 1 runs ahead: 1, 3, 5, 7, 9, then worker 0's 0, 2, 4, 6, 8.
		seq := 2*k + 1
		if k >= 5 {
			seq = 2 * (k - 5)
		}
		f := udpFrameWorkers(t, seq, 2)
		frames = append(frames, f)
	}
	r, err := Run(context.Background(), &sliceReceiver{frames: frames, eof: true}, DecodePacket, Options{Expect: 10})
	if err != nil || r.Frames != 10 || r.Reordered != 0 || r.Lost != 0 || !r.OK() {
		t.Fatalf("err=%v %+v", err, r)
	}
}

func udpFrameWorkers(t *testing.T, seq uint64, workers int) []byte {
	eth := &layers.Ethernet{SrcMAC: srcMAC, DstMAC: dstMAC, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: src4, DstIP: dst4}
	p := make([]byte, 40)
	frame.PutSignature(p, frame.Signature{Stream: 0, Seq: seq, Workers: workers})
	return build(t, eth, ip, &layers.UDP{SrcPort: 1, DstPort: 2}, gopacket.Payload(p))
}
