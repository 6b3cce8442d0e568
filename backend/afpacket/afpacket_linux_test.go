//go:build linux

package afpacket_test

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/backend/afpacket"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/internal/testbed"
	"github.com/wpg-dev/wpg/recv"
	"github.com/wpg-dev/wpg/sysinfo"
)

// udpFrame writes an Ethernet/IPv4/UDP frame of size bytes with correct
// checksums and a signature into b.
func udpFrame(b []byte, size int, sig frame.Signature) {
	clear(b[:size])
	copy(b[0:], []byte{0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00})
	ip := b[14:size]
	ip[0], ip[8], ip[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(ip[2:], uint16(len(ip)))
	copy(ip[12:], []byte{198, 18, 0, 1, 198, 19, 0, 1})
	binary.BigEndian.PutUint16(ip[10:], ^fold(sum(ip[:20], 0)))
	udp := ip[20:]
	binary.BigEndian.PutUint16(udp[0:], 1000)
	binary.BigEndian.PutUint16(udp[2:], 2000)
	binary.BigEndian.PutUint16(udp[4:], uint16(len(udp)))
	frame.PutSignature(udp, sig)
	pseudo := sum(ip[12:20], 0) + 17 + uint64(len(udp))
	c := ^fold(sum(udp, pseudo))
	if c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(udp[6:], c)
}

func sum(b []byte, acc uint64) uint64 {
	for i := 0; i+1 < len(b); i += 2 {
		acc += uint64(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		acc += uint64(b[len(b)-1]) << 8
	}
	return acc
}

func fold(a uint64) uint16 {
	for a > 0xffff {
		a = a>>16 + a&0xffff
	}
	return uint16(a)
}

// send pushes count frames of size bytes as stream 1 through snd.
func send(t *testing.T, snd backend.Sender, count, size, batch int) {
	t.Helper()
	bufs := make([][]byte, batch)
	lens := make([]int, batch)
	seq := uint64(0)
	for seq < uint64(count) {
		n, err := snd.Reserve(bufs[:min(batch, count-int(seq))])
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			udpFrame(bufs[i], size, frame.Signature{Stream: 1, Seq: seq, TxNs: 1})
			lens[i] = size
			seq++
		}
		got, err := snd.Commit(lens[:n])
		if err != nil || got != n {
			t.Fatalf("Commit(%d) = %d, %v", n, got, err)
		}
	}
	if err := snd.Flush(); err != nil {
		t.Fatal(err)
	}
}

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// startReceiver starts a receiver on the veth's inner end expecting count
// frames; its result arrives on the channel. It is closed when the test ends.
func startReceiver(t *testing.T, v *testbed.Veth, count int) <-chan recv.Result {
	t.Helper()
	var rx *afpacket.Receiver
	if err := v.Do(func() (err error) {
		rx, err = afpacket.NewReceiver(context.Background(), backend.Options{Net: backend.NetOptions{Interface: v.Inner}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rx.Close() })
	done := make(chan recv.Result, 1)
	go func() {
		r, err := recv.Run(context.Background(), rx, recv.DecodePacket, recv.Options{Expect: uint64(count), IdleTimeout: 2 * time.Second, Duration: time.Minute})
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	return done
}

func TestSendReceiveVeth(t *testing.T) {
	v := testbed.NewVeth(t)
	for _, tc := range []struct {
		name string
		o    backend.Options
		mode string
	}{
		{"ring", backend.Options{}, afpacket.ModeTxRing},
		{"ring-bypass", backend.Options{Net: backend.NetOptions{QdiscBypass: true}}, afpacket.ModeTxRing},
		{"ring-small", backend.Options{Net: backend.NetOptions{RingDepth: 64}}, afpacket.ModeTxRing},
		{"sendmmsg", backend.Options{Net: backend.NetOptions{NoTxRing: true}}, afpacket.ModeSendmmsg},
		// veth defaults to linear skbs; frags attaches the ring pages.
		{"ring-frags", backend.Options{Net: backend.NetOptions{TxCopy: backend.TxCopyFrags}}, afpacket.ModeTxRing},
		{"ring-linear", backend.Options{Net: backend.NetOptions{TxCopy: backend.TxCopyLinear}}, afpacket.ModeTxRing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const count, size = 20000, 128
			done := startReceiver(t, v, count)
			o := tc.o
			o.Net.Interface, o.MaxFrame, o.Batch = v.Outer, size, 64
			snd, err := afpacket.NewSender(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer snd.Close()
			info := snd.Info()
			if info.Mode != tc.mode || info.Interface != v.Outer {
				t.Fatalf("info %+v", info)
			}
			if tc.o.Net.RingDepth == 64 && info.RingDepth != 64 {
				t.Fatalf("ring depth %d, want 64", info.RingDepth)
			}
			if copyMode := info.Details["tx_copy"]; tc.o.Net.TxCopy == backend.TxCopyFrags && !strings.HasPrefix(copyMode, "zero-copy") ||
				tc.mode == afpacket.ModeTxRing && tc.o.Net.TxCopy != backend.TxCopyFrags && !strings.HasPrefix(copyMode, "linear") {
				t.Fatalf("tx_copy %q with --tx-copy %q on veth", copyMode, tc.o.Net.TxCopy)
			}
			send(t, snd, count, size, 64)
			r := <-done
			if r.Frames != count || !r.OK() || r.Corrupted != 0 || len(r.Streams) != 1 || r.Streams[0].Frames != count {
				t.Fatalf("received %+v", r)
			}
			if err := snd.Close(); err != nil {
				t.Fatal(err)
			}
			if err := snd.Close(); err != nil {
				t.Fatal("second Close:", err)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	v := testbed.NewVeth(t)
	ctx := context.Background()
	before := openFDs(t)

	_, err := afpacket.NewSender(ctx, backend.Options{MaxFrame: 64, Net: backend.NetOptions{Interface: "wpg-nonesuch"}})
	if !errors.Is(err, sysinfo.ErrNoInterface) || !strings.Contains(err.Error(), v.Outer) {
		t.Errorf("unknown interface: %v", err)
	}
	// A template whose untagged stream has 1518-byte frames is refused at
	// open, naming the stream, not after its first such frame.
	_, err = afpacket.NewSender(ctx, backend.Options{MaxFrame: 1518, MaxUntagged: 1518, UntaggedStream: "big", Net: backend.NetOptions{Interface: v.Outer}})
	if err == nil || !strings.Contains(err.Error(), `"big"`) || !strings.Contains(err.Error(), "mtu 1504") {
		t.Errorf("untagged stream over the MTU: %v", err)
	}
	_, err = afpacket.NewSender(ctx, backend.Options{MaxFrame: 64, Net: backend.NetOptions{Interface: v.Outer, TxCopy: "zero"}})
	if err == nil || !strings.Contains(err.Error(), "--tx-copy") || !strings.Contains(err.Error(), "frags") {
		t.Errorf("bad --tx-copy: %v", err)
	}
	_, err = afpacket.NewSender(ctx, backend.Options{MaxFrame: 1519, Net: backend.NetOptions{Interface: v.Outer}})
	if err == nil || !strings.Contains(err.Error(), "MTU") {
		t.Errorf("frame over MTU: %v", err)
	}
	for _, noRing := range []bool{false, true} {
		// 1518 bytes pass the open check (a VLAN-tagged frame may be that
		// long) but an untagged one is refused by Commit.
		snd, err := afpacket.NewSender(ctx, backend.Options{MaxFrame: 1518, Net: backend.NetOptions{Interface: v.Outer, NoTxRing: noRing}})
		if err != nil {
			t.Fatal(err)
		}
		bufs := make([][]byte, 1)
		if n, err := snd.Reserve(bufs); n != 1 || err != nil {
			t.Fatal(n, err)
		}
		udpFrame(bufs[0], 1518, frame.Signature{})
		if _, err := snd.Commit([]int{1518}); err == nil || !strings.Contains(err.Error(), "MTU") {
			t.Errorf("untagged 1518-byte frame (no ring %v): %v", noRing, err)
		}
		snd.Close()
	}
	if err := ip("link", "set", v.Outer, "down"); err != nil {
		t.Fatal(err)
	}
	_, err = afpacket.NewSender(ctx, backend.Options{MaxFrame: 64, Net: backend.NetOptions{Interface: v.Outer}})
	if err == nil || !strings.Contains(err.Error(), "down") || !strings.Contains(err.Error(), "ip link set") {
		t.Errorf("interface down: %v", err)
	}
	_, err = afpacket.NewSender(ctx, backend.Options{MaxFrame: 64, Net: backend.NetOptions{Interface: v.Outer, RingBytes: 64}})
	if err == nil {
		t.Error("ring smaller than a slot accepted")
	}
	if after := openFDs(t); after != before {
		t.Errorf("%d file descriptors before the failures, %d after", before, after)
	}
}

// BenchmarkSender measures Reserve+render+Commit of 64-byte frames in
// batches of 256 on a veth pair (the peer drops them) and proves the hot
// path allocates nothing.
func BenchmarkSender(b *testing.B) {
	v := testbed.NewVeth(b)
	for _, mode := range []struct {
		name string
		o    backend.Options
	}{{"ring", backend.Options{Net: backend.NetOptions{QdiscBypass: true}}}, {"sendmmsg", backend.Options{Net: backend.NetOptions{NoTxRing: true, QdiscBypass: true}}}} {
		b.Run(mode.name, func(b *testing.B) {
			o := mode.o
			o.Net.Interface, o.MaxFrame, o.Batch = v.Outer, 64, 256
			snd, err := afpacket.NewSender(context.Background(), o)
			if err != nil {
				b.Fatal(err)
			}
			defer snd.Close()
			bufs := make([][]byte, 256)
			lens := make([]int, 256)
			seq := uint64(0)
			b.ReportAllocs()
			b.SetBytes(64)
			for i := 0; i < b.N; {
				n, err := snd.Reserve(bufs[:min(256, b.N-i)])
				if err != nil {
					b.Fatal(err)
				}
				for j := range n {
					udpFrame(bufs[j], 64, frame.Signature{Stream: 1, Seq: seq})
					lens[j] = 64
					seq++
				}
				if _, err := snd.Commit(lens[:n]); err != nil {
					b.Fatal(err)
				}
				i += n
			}
		})
	}
}

// TestReceiverInterfaceDown: a receiver whose interface goes down reports
// an error instead of spinning.
func TestReceiverInterfaceDown(t *testing.T) {
	v := testbed.NewVeth(t)
	rx, err := afpacket.NewReceiver(context.Background(), backend.Options{Net: backend.NetOptions{Interface: v.Outer}})
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	views := make([][]byte, 8)
	if n, err := rx.Next(views, 10*time.Millisecond); n != 0 || err != nil {
		t.Fatalf("idle Next = %d, %v", n, err)
	}
	if err := ip("link", "set", v.Outer, "down"); err != nil {
		t.Fatal(err)
	}
	var nerr error
	for i := 0; i < 100 && nerr == nil; i++ {
		_, nerr = rx.Next(views, 10*time.Millisecond)
	}
	if nerr == nil || !strings.Contains(nerr.Error(), v.Outer) {
		t.Fatalf("Next after the interface went down: %v", nerr)
	}
	t.Log(nerr)
}

// TestMemlockNoPartialState runs this test binary again without
// CAP_IPC_LOCK and with a 1 MiB memlock limit (setpriv, prlimit): opening
// a sender whose ring needs more must fail with the memlock error naming
// the fix, and leave no socket and no mapping behind.
func TestMemlockNoPartialState(t *testing.T) {
	if os.Getenv("WPG_MEMLOCK_CHILD") != "" {
		memlockChild(t)
		return
	}
	v := testbed.NewVeth(t)
	setpriv := testbed.RequireTool(t, "setpriv", "util-linux")
	prlimit := testbed.RequireTool(t, "prlimit", "util-linux")
	cmd := exec.Command(setpriv, "--bounding-set", "-ipc_lock", "--inh-caps=-ipc_lock",
		prlimit, "--memlock=1048576:1048576", os.Args[0], "-test.run=^TestMemlockNoPartialState$", "-test.v")
	cmd.Env = append(os.Environ(), "WPG_MEMLOCK_CHILD="+v.Outer)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestMemlockNoPartialState") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func memlockChild(t *testing.T) {
	ifname := os.Getenv("WPG_MEMLOCK_CHILD")
	// Warm up: the runtime's poller (epoll, eventfd) is created lazily.
	_, _ = afpacket.NewSender(context.Background(), backend.Options{MaxFrame: 1500, Net: backend.NetOptions{Interface: ifname}})
	before, maps := openFDs(t), packetMaps(t)
	for _, o := range []backend.Options{
		{MaxFrame: 1500, Net: backend.NetOptions{Interface: ifname}}, // 8 MiB TX ring
	} {
		_, err := afpacket.NewSender(context.Background(), o)
		if !errors.Is(err, sys.ErrMemlock) || !strings.Contains(err.Error(), "ulimit -l") {
			t.Fatalf("sender: %v", err)
		}
	}
	_, err := afpacket.NewReceiver(context.Background(), backend.Options{Net: backend.NetOptions{Interface: ifname}}) // 16 MiB RX ring
	if !errors.Is(err, sys.ErrMemlock) || !strings.Contains(err.Error(), "--no-rx-ring") {
		t.Fatalf("receiver: %v", err)
	}
	if after := openFDs(t); after != before {
		t.Errorf("%d file descriptors before, %d after", before, after)
	}
	if after := packetMaps(t); after != maps {
		t.Errorf("%d packet socket mappings before, %d after", maps, after)
	}
	// Without a ring the receiver needs no locked memory.
	rx, err := afpacket.NewReceiver(context.Background(), backend.Options{Net: backend.NetOptions{Interface: ifname, NoRxRing: true}})
	if err != nil || rx.Info().Mode != afpacket.ModeRecvmmsg {
		t.Fatalf("receiver without a ring under a 1 MiB limit: %v", err)
	}
	rx.Close()
	// A ring within the limit still works.
	snd, err := afpacket.NewSender(context.Background(), backend.Options{MaxFrame: 64, Net: backend.NetOptions{Interface: ifname, RingDepth: 1024}})
	if err != nil {
		t.Fatalf("128 KiB ring under a 1 MiB limit: %v", err)
	}
	snd.Close()
}

// packetMaps counts mappings of packet sockets in this process.
func packetMaps(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "socket:[") + strings.Count(string(b), "packet")
}

// TestRingHint: a linear ring too large for the cache at large frames gets
// advice naming the flag; a cache-sized ring, small frames and fragments
// get none.
func TestRingHint(t *testing.T) {
	v := testbed.NewVeth(t)
	for _, tc := range []struct {
		o    backend.Options
		want string
	}{
		{backend.Options{MaxFrame: 1500}, "--ring-depth 256"},
		{backend.Options{MaxFrame: 1500, Net: backend.NetOptions{RingDepth: 256}}, ""},
		{backend.Options{MaxFrame: 128}, ""},
		{backend.Options{MaxFrame: 1500, Net: backend.NetOptions{TxCopy: backend.TxCopyFrags}}, ""},
	} {
		o := tc.o
		o.Net.Interface = v.Outer
		snd, err := afpacket.NewSender(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		hint := snd.Info().Hint
		snd.Close()
		if tc.want == "" && hint != "" || tc.want != "" && !strings.Contains(hint, tc.want) {
			t.Errorf("%+v: hint %q, want %q", tc.o, hint, tc.want)
		}
	}
}

// TestLoopbackFrags: on lo (here the test namespace's) the TX ring's pages
// go out as fragments by default, and a slot rewritten every 16 frames
// still delivers every frame intact: the receive path copies the frame
// before the kick returns.
func TestLoopbackFrags(t *testing.T) {
	v := testbed.NewVeth(t)
	const count, size = 50000, 1500
	var (
		rx  *afpacket.Receiver
		snd *afpacket.Sender
	)
	if err := v.Do(func() (err error) {
		if rx, err = afpacket.NewReceiver(context.Background(), backend.Options{Net: backend.NetOptions{Interface: "lo"}}); err != nil {
			return err
		}
		snd, err = afpacket.NewSender(context.Background(), backend.Options{MaxFrame: size, Batch: 16, Net: backend.NetOptions{Interface: "lo", RingDepth: 16, QdiscBypass: true}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	defer snd.Close()
	if c := snd.Info().Details["tx_copy"]; !strings.Contains(c, "256 bytes or more go as fragments") {
		t.Fatalf("tx_copy on lo: %q", c)
	}
	done := make(chan recv.Result, 1)
	go func() {
		r, err := recv.Run(context.Background(), rx, recv.DecodePacket, recv.Options{Expect: count, IdleTimeout: time.Second, Duration: time.Minute})
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	send(t, snd, count, size, 16)
	r := <-done
	// The RX ring may overflow (a loss); a rewritten slot would show as
	// a duplicate or a corrupted frame. Missing is count minus Frames,
	// the lost frames among them (those below the last one received):
	// a lost frame is not counted twice.
	if r.Duplicated != 0 || r.Corrupted != 0 || r.Reordered != 0 || r.Frames < count/2 || r.Frames+r.Missing != count || r.Lost > r.Missing {
		t.Fatalf("received %+v", r)
	}
}
