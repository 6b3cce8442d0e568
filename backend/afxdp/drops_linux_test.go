//go:build linux

package afxdp

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/backend/afxdp/internal/xsk"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/testbed"
)

// TestSocketDrops: a receiver that does not drain its socket while more
// frames arrive than its rings hold says what the socket dropped, from
// the kernel's XDP_STATISTICS: rx_dropped, rx_ring_full and
// rx_fill_ring_empty_descs, their kernel_drops, and still after Close;
// the frames it then hands out and those it dropped account for what
// was sent. The sender's details carry its socket's counters.
func TestSocketDrops(t *testing.T) {
	v := testbed.NewVeth(t)
	const sent = 400
	// A small UMEM: 64 KiB of chunks, all on the fill ring, and an RX ring
	// of as many.
	rx := rxOn(t, v, 64<<10)
	inst, err := open(context.Background(), backend.Options{Workers: 1, Batch: 64, MaxFrame: 128, Net: backend.NetOptions{Interface: v.Outer}})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	s, err := inst.NewSender(backend.Worker{MaxFrame: 128})
	if err != nil {
		t.Fatal(err)
	}
	bufs, lens := make([][]byte, 8), make([]int, 8)
	for seq := 0; seq < sent; {
		n, err := s.Reserve(bufs)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			lens[i] = signed(bufs[i], 0, uint64(seq+i))
		}
		if _, err := s.Commit(lens[:n]); err != nil {
			t.Fatal(err)
		}
		seq += n
		time.Sleep(200 * time.Microsecond) // no more than the veth's own queue takes
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d := s.Info().Details; d["completions"] != strconv.Itoa(sent) || d["tx_invalid_descs"] != "0" || d["tx_ring_empty_descs"] == "" {
		t.Errorf("sender details %v: want %d completions, tx_invalid_descs 0 and tx_ring_empty_descs", d, sent)
	}

	num := func(d map[string]string, k string) uint64 {
		t.Helper()
		n, err := strconv.ParseUint(d[k], 10, 64)
		if err != nil {
			t.Fatalf("details %v: %s is not a count", d, k)
		}
		return n
	}
	// The frames past the UMEM's chunks are dropped at the socket: the
	// kernel found no fill-ring buffer for them (rx_dropped and
	// rx_fill_ring_empty_descs) or no room on the RX ring (rx_ring_full).
	chunks := uint64(64<<10) / num(rx.Info().Details, "chunk_bytes")
	var d map[string]string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		d = rx.Info().Details
		if num(d, "kernel_drops") >= sent-chunks || time.Now().After(deadline) {
			break
		}
	}
	drops := num(d, "kernel_drops")
	if drops == 0 || drops != num(d, "rx_dropped")+num(d, "rx_ring_full") || num(d, "rx_fill_ring_empty_descs")+num(d, "rx_ring_full") == 0 || num(d, "rx_invalid_descs") != 0 {
		t.Errorf("receiver details %v: want frames dropped at the socket (rx_dropped + rx_ring_full = kernel_drops > 0, an empty fill ring or a full RX ring)", d)
	}
	views := make([][]byte, 64)
	var got uint64
	for {
		n, err := rx.Next(views, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		got += uint64(n)
	}
	t.Logf("sent %d: received %d, dropped at the socket %d (%v)", sent, got, drops, d)
	if got == 0 || got > chunks || got+drops > sent {
		t.Errorf("received %d, dropped %d of %d sent into %d chunks", got, drops, sent, chunks)
	}
	if err := rx.Close(); err != nil {
		t.Fatal(err)
	}
	if after := rx.Info().Details; after["kernel_drops"] != d["kernel_drops"] || after["rx_fill_ring_empty_descs"] == "" {
		t.Errorf("after Close: %v, before %v", after, d)
	}
}

// rxOn opens a receiver on v's inner end, in its namespace, with a UMEM
// of ringBytes (0: the default); the test's end closes it.
func rxOn(t *testing.T, v *testbed.Veth, ringBytes int64) *Receiver {
	t.Helper()
	var rx *Receiver
	if err := v.Do(func() error {
		in, err := open(context.Background(), backend.Options{Workers: 1, Batch: 64, Net: backend.NetOptions{Interface: v.Inner, RingBytes: ringBytes}})
		if err != nil {
			return err
		}
		t.Cleanup(func() { _ = in.Close() })
		r, err := in.NewReceiver()
		rx, _ = r.(*Receiver)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rx.Close() })
	return rx
}

// signed writes a 100-byte frame that wpg's receiver takes into b: an
// Ethernet header and the signature of stream's frame seq. It returns
// the frame's length.
func signed(b []byte, stream uint16, seq uint64) int {
	b = b[:100]
	clear(b)
	copy(b, []byte{0x02, 0, 0, 0, 0, 0x99, 0x02, 0, 0, 0, 0, 0x01, 0x88, 0xb5})
	frame.PutSignature(b, frame.Signature{Stream: stream, Seq: seq, Workers: 1})
	return len(b)
}

// TestStatDetails: the kernel's counters as the receiver's and the
// sender's details; the ring counters only from a kernel that has them
// (5.9 on), and a failed read said.
func TestStatDetails(t *testing.T) {
	st := sockStats{Stats: xsk.Stats{RxDropped: 3, RxInvalid: 1, TxInvalid: 2, RxRingFull: 4, RxFillEmpty: 5, TxRingEmpty: 6, Ring: true}}
	d := map[string]string{}
	st.details(d, true)
	want := map[string]string{"kernel_drops": "7", "rx_dropped": "3", "rx_invalid_descs": "1", "rx_ring_full": "4", "rx_fill_ring_empty_descs": "5"}
	if len(d) != len(want) {
		t.Errorf("receiver details %v, want %v", d, want)
	}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("receiver %s = %q, want %s", k, d[k], v)
		}
	}
	d = map[string]string{}
	st.details(d, false)
	if len(d) != 2 || d["tx_invalid_descs"] != "2" || d["tx_ring_empty_descs"] != "6" {
		t.Errorf("sender details %v", d)
	}
	// A kernel before 5.9: no ring counters, not zeros.
	old := sockStats{Stats: xsk.Stats{RxDropped: 3}}
	d = map[string]string{}
	old.details(d, true)
	if _, ok := d["rx_ring_full"]; ok || d["kernel_drops"] != "3" {
		t.Errorf("old kernel: %v", d)
	}
	// Summing keeps Ring only where every socket had it.
	sum := xsk.Stats{Ring: true}
	sum.Add(st.Stats)
	sum.Add(old.Stats)
	if sum.Ring || sum.RxDropped != 6 {
		t.Errorf("sum %+v", sum)
	}
	d = map[string]string{}
	sockStats{err: errors.New("getsockopt(XDP_STATISTICS): bad file descriptor")}.details(d, true)
	if d["xdp_statistics"] == "" {
		t.Errorf("a failed read: %v", d)
	}
}
