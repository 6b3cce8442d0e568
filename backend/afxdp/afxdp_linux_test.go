//go:build linux

package afxdp

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/internal/testbed"
)

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestSendReceiveOverVeth: two senders on the two queues of a veth pair
// hand every frame to the receiver's sockets on the far end (steered by its
// XDP program), exactly once, and a frame without the signature is not
// stolen from the stack. Closing everything leaves no descriptor open and
// no program attached.
func TestSendReceiveOverVeth(t *testing.T) {
	v := testbed.NewVeth(t, testbed.Queues(2))
	before := openFDs(t)
	start := sys.MonotonicNs()
	const perWorker = 5000
	var rx backend.Receiver
	var rxInst backend.Instance
	if err := v.Do(func() error {
		var err error
		rxInst, err = open(context.Background(), backend.Options{Workers: 1, Batch: 64, Net: backend.NetOptions{Interface: v.Inner}})
		if err != nil {
			return err
		}
		rx, err = rxInst.NewReceiver()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if out, _ := exec.Command("ip", "-n", v.NS, "link", "show", v.Inner).CombinedOutput(); !strings.Contains(string(out), "wpg_steer") {
		t.Fatalf("no program attached while receiving:\n%s", out)
	}
	inst, err := open(context.Background(), backend.Options{Workers: 2, Batch: 64, MaxFrame: 128, Net: backend.NetOptions{Interface: v.Outer}})
	if err != nil {
		t.Fatal(err)
	}
	var senders []backend.Sender
	for w := range 2 {
		s, err := inst.NewSender(backend.Worker{Index: w, MaxFrame: 128})
		if err != nil {
			t.Fatal(err)
		}
		senders = append(senders, s)
		if q := s.Info().Details["queue"]; q != strconv.Itoa(w) {
			t.Errorf("worker %d on queue %s", w, q)
		}
	}
	bufs, lens := make([][]byte, 64), make([]int, 64)
	for w, s := range senders {
		for seq := 0; seq < perWorker; {
			n, err := s.Reserve(bufs[:min(64, perWorker-seq)])
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				lens[i] = signed(bufs[i], uint16(w), uint64(seq+i))
			}
			if _, err := s.Commit(lens[:n]); err != nil {
				t.Fatal(err)
			}
			seq += n
			// Keep to what the receiver takes between reads.
			if seq%1024 == 0 {
				time.Sleep(2 * time.Millisecond)
			}
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		if c := s.Info().Details["completions"]; c != strconv.Itoa(perWorker) {
			t.Errorf("worker %d: %s completions, want %d", w, c, perWorker)
		}
	}
	// One frame without a signature: it must not reach the sockets.
	n, _ := senders[0].Reserve(bufs[:1])
	if n == 1 {
		clear(bufs[0][:64])
		copy(bufs[0], []byte{0x02, 0, 0, 0, 0, 0x99, 0x02, 0, 0, 0, 0, 0x01, 0x88, 0xb5})
		if _, err := senders[0].Commit([]int{64}); err != nil {
			t.Fatal(err)
		}
	}
	seen := make([][]bool, 2)
	for w := range seen {
		seen[w] = make([]bool, perWorker)
	}
	views := make([][]byte, 64)
	got, unsigned := 0, 0
	for deadline := time.Now().Add(10 * time.Second); got < 2*perWorker && time.Now().Before(deadline); {
		n, err := rx.Next(views, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		// Every frame carries the time it reached the XDP program: after
		// the test started, not after Next returned.
		ts := rx.(*Receiver).RxTimestamps()
		now := sys.MonotonicNs()
		if len(ts) != n {
			t.Fatalf("%d timestamps for %d frames", len(ts), n)
		}
		for _, x := range ts {
			if x < start || x > now {
				t.Fatalf("receive time %d outside [%d, %d]", x, start, now)
			}
		}
		for _, b := range views[:n] {
			sig, ok := frame.ParseSignature(b)
			if !ok || len(b) != 100 || sig.Stream > 1 || sig.Seq >= perWorker {
				unsigned++
				continue
			}
			if seen[sig.Stream][sig.Seq] {
				t.Errorf("duplicate %d/%d", sig.Stream, sig.Seq)
			}
			seen[sig.Stream][sig.Seq] = true
			got++
		}
	}
	if n, _ := rx.Next(views, 50*time.Millisecond); n != 0 || unsigned != 0 {
		t.Errorf("%d frames that are not wpg's, %d more after the last", unsigned, n)
	}
	if got != 2*perWorker {
		t.Errorf("received %d of %d frames (receiver %+v)", got, 2*perWorker, rx.Info())
	}
	if d := rx.Info().Details; d["kernel_drops"] != "0" || d["queues"] != "0-1" || !strings.HasPrefix(d["rx_timestamps"], strconv.Itoa(2*perWorker)+" ") {
		t.Errorf("receiver details %v", d)
	}
	for _, s := range senders {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	}
	if err := rx.Close(); err != nil {
		t.Error(err)
	}
	if err := rx.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_ = inst.Close()
	_ = rxInst.Close()
	if after := openFDs(t); after != before {
		t.Errorf("%d descriptors open before, %d after", before, after)
	}
	if out, _ := exec.Command("ip", "-n", v.NS, "link", "show", v.Inner).CombinedOutput(); strings.Contains(string(out), "xdp") {
		t.Errorf("program still attached after Close:\n%s", out)
	}
}

// TestQueueCheck: a worker's queue beyond the interface's is refused
// before any socket opens, naming the count and ethtool -L.
func TestQueueCheck(t *testing.T) {
	ifc := iface{name: "eth9", txQueues: 2, rxQueues: 2}
	if err := checkQueues(ifc, 0, 2, 2, "TX"); err != nil {
		t.Errorf("queues 0-1 of 2: %v", err)
	}
	err := checkQueues(ifc, 1, 2, 2, "TX")
	if err == nil || !strings.Contains(err.Error(), "queues 1-2") || !strings.Contains(err.Error(), "2 TX queue") || !strings.Contains(err.Error(), "ethtool -L eth9 combined 3") {
		t.Errorf("queues 1-2 of 2: %v", err)
	}
	// A veth's queues are fixed when it is made (ethtool -L cannot go past
	// them): the fix is to make it again with more.
	veth := iface{name: "wpg0", driver: "veth", txQueues: 1, rxQueues: 1}
	err = checkQueues(veth, 0, 2, 1, "TX")
	if err == nil || !strings.Contains(err.Error(), "ip link add wpg0 numtxqueues 2 numrxqueues 2 type veth peer name PEER numtxqueues 2 numrxqueues 2") || strings.Contains(err.Error(), "ethtool -L") {
		t.Errorf("queues 0-1 of a veth with 1: %v", err)
	}
}

// TestQueuesOfEachSide: a receiver is held to the RX queues and a sender
// to the TX queues, each refused before any socket opens (lo has one of
// each; no privileges needed). Before, open refused a receiver by the TX
// count, in words about --workers.
func TestQueuesOfEachSide(t *testing.T) {
	in, err := open(context.Background(), backend.Options{Workers: 1, Net: backend.NetOptions{Interface: "lo", Queue: 1}})
	if err != nil {
		t.Fatalf("open refused before either side was asked for: %v", err)
	}
	defer in.Close()
	if _, err := in.NewReceiver(); err == nil || !strings.Contains(err.Error(), "1 RX queue") || strings.Contains(err.Error(), "TX") || strings.Contains(err.Error(), "--workers") {
		t.Errorf("receiver on queue 1 of lo: %v; want the RX queue count", err)
	}
	if _, err := in.NewSender(backend.Worker{Index: 0, MaxFrame: 64}); err == nil || !strings.Contains(err.Error(), "1 TX queue") {
		t.Errorf("sender on queue 1 of lo: %v; want the TX queue count", err)
	}
}

// TestReceiverMTUNamesTheInterface: an MTU too large for a receive UMEM
// (lo's 65536) is refused before any socket, with the command to run
// naming the interface (not a literal IFACE) and the afpacket way out.
func TestReceiverMTUNamesTheInterface(t *testing.T) {
	_, err := newReceiver(context.Background(), iface{name: "wpg9", mtu: 65536, txQueues: 1, rxQueues: 1}, backend.Options{})
	if err == nil || !strings.Contains(err.Error(), "ip link set wpg9 mtu") || strings.Contains(err.Error(), "IFACE") || !strings.Contains(err.Error(), "--backend afpacket") {
		t.Errorf("MTU 65536: %v; want `ip link set wpg9 mtu N` and --backend afpacket", err)
	}
}

// TestFrameAboveAPage: a frame too large for a UMEM chunk is refused as
// such, whatever the MTU, not with advice to raise the MTU.
func TestFrameAboveAPage(t *testing.T) {
	page := os.Getpagesize()
	_, err := newSender(iface{name: "veth9", mtu: 1500, txQueues: 1, rxQueues: 1}, 0, backend.Options{MaxFrame: page + 1})
	if err == nil || !strings.Contains(err.Error(), "UMEM chunk") || strings.Contains(err.Error(), "mtu") {
		t.Errorf("frame of %d bytes on an MTU of 1500: %v; want the UMEM chunk limit, no MTU advice", page+1, err)
	}
}

func TestCheckXDPMode(t *testing.T) {
	for _, m := range []string{"", "auto", "native", "generic"} {
		if err := CheckXDPMode(m); err != nil {
			t.Errorf("%q: %v", m, err)
		}
	}
	if err := CheckXDPMode("zc"); err == nil || !strings.Contains(err.Error(), "auto, native") {
		t.Errorf("zc: %v", err)
	}
}

// TestHotPathDoesNotAllocate: Reserve and Commit (with their kicks and
// completion reaping) and the receiver's Next allocate nothing per batch.
func TestHotPathDoesNotAllocate(t *testing.T) {
	v := testbed.NewVeth(t)
	rx := rxOn(t, v, 0)
	inst, err := open(context.Background(), backend.Options{Workers: 1, Batch: 64, MaxFrame: 64, Net: backend.NetOptions{Interface: v.Outer}})
	if err != nil {
		t.Fatal(err)
	}
	snd, err := inst.NewSender(backend.Worker{MaxFrame: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer snd.Close()
	bufs, lens, views := make([][]byte, 64), make([]int, 64), make([][]byte, 64)
	seq := uint64(0)
	if a := testing.AllocsPerRun(200, func() {
		n, err := snd.Reserve(bufs)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			b := bufs[i][:64]
			frame.PutSignature(b, frame.Signature{Seq: seq, Workers: 1})
			seq++
			lens[i] = 64
		}
		if _, err := snd.Commit(lens[:n]); err != nil {
			t.Fatal(err)
		}
		if _, err := rx.Next(views, time.Millisecond); err != nil {
			t.Fatal(err)
		}
		_ = rx.RxTimestamps()
	}); a != 0 {
		t.Errorf("%.1f allocations per batch", a)
	}
}
