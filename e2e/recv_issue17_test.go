//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/backend/afpacket"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/testbed"
)

// recvTestSend runs `wpg send … --json` and decodes its report.
func recvTestSend(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out, errs, code := run(t, t.TempDir(), append(args, "--json")...)
	if code != 0 {
		t.Fatalf("wpg send: exit %d: %s", code, errs)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("send report %q: %v", out, err)
	}
	return rep
}

// TestTwoWorkersAreNotReordered: two sender workers share each stream
// (worker i sends k ≡ i mod 2); their interleaving is not reordering
// (issue #17 item 18).
func TestTwoWorkersAreNotReordered(t *testing.T) {
	v := testbed.NewVeth(t)
	r := startRecv(t, v, "--expect", "200000", "--idle-timeout", "5s")
	sendMixed(t, v, "--rate", "100kpps", "--workers", "2")
	res, code := r.wait(t)
	if code != 0 || res.Frames != mixedFrames || res.Reordered != 0 || res.Lost != 0 || res.Duplicated != 0 || res.Corrupted != 0 {
		t.Fatalf("exit %d: frames %d reordered %d lost %d dup %d corrupted %d\nstderr: %s", code, res.Frames, res.Reordered, res.Lost, res.Duplicated, res.Corrupted, r.errb.String())
	}
}

// TestRecvVlanBytes: AF_PACKET takes the VLAN tag out of received frames;
// the receiver puts it back, so it counts the bytes that were sent, with
// the ring and with recvmmsg (issue #17 item 19).
func TestRecvVlanBytes(t *testing.T) {
	tpl := filepath.Join(t.TempDir(), "vlan.wpg.yaml")
	if err := os.WriteFile(tpl, []byte("streams:\n  - size: 100\n    vlan: {id: 10}\n    ipv4: {}\n    udp: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, rx := range [][]string{nil, {"--no-rx-ring"}} {
		t.Run(map[bool]string{true: "ring", false: "recvmmsg"}[rx == nil], func(t *testing.T) {
			v := testbed.NewVeth(t)
			r := startRecv(t, v, append([]string{"--expect", "1000", "--idle-timeout", "3s"}, rx...)...)
			rep := recvTestSend(t, "send", tpl, "-i", v.Outer, "--count", "1000", "--rate", "20kpps")
			res, code := r.wait(t)
			if code != 0 || res.Frames != 1000 || res.Corrupted != 0 {
				t.Fatalf("exit %d, %+v\nstderr: %s", code, res, r.errb.String())
			}
			if sent := rep["bytes"].(float64); res.Bytes != 100000 || float64(res.Bytes) != sent {
				t.Fatalf("receiver counted %d bytes, sender %v: want 100000 on both", res.Bytes, sent)
			}
		})
	}
}

// TestExpectIgnoresForeignGarbage: frames carrying a wpg-looking signature
// whose headers do not check (garbage on the wire) do not count toward
// --expect: the receiver waits for the genuine frames (issue #17 item 17).
func TestExpectIgnoresForeignGarbage(t *testing.T) {
	v := testbed.NewVeth(t)
	r := startRecv(t, v, "--expect", "500", "--idle-timeout", "3s")
	snd, err := afpacket.NewSender(context.Background(), backend.Options{MaxFrame: 64, Net: backend.NetOptions{Interface: v.Outer, NoTxRing: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer snd.Close()
	bufs := make([][]byte, 16)
	for round := 0; round < 40; round++ { // 640 garbage frames
		n, err := snd.Reserve(bufs)
		if err != nil || n == 0 {
			t.Fatal(n, err)
		}
		lens := make([]int, n)
		for i, b := range bufs[:n] {
			b = b[:64]
			for j := range b {
				b[j] = byte(j*7 + round + i)
			}
			copy(b, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 9, 0x08, 0x00})
			frame.PutSignature(b, frame.Signature{Stream: 0, Seq: uint64(round*16 + i)})
			lens[i] = 64
		}
		if _, err := snd.Commit(lens); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	rep := recvTestSend(t, "send", "-i", v.Outer, "--count", "500", "--rate", "20kpps")
	res, code := r.wait(t)
	if rep["frames"].(float64) != 500 || res.Frames != 500 || res.Missing != 0 || res.Corrupted == 0 || res.Stop != "expect" {
		t.Fatalf("exit %d: frames %d missing %d corrupted %d stop %q\nstderr: %s", code, res.Frames, res.Missing, res.Corrupted, res.Stop, r.errb.String())
	}
}
