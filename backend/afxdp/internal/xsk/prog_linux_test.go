//go:build linux

package xsk

import (
	"net"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/testbed"
)

// TestSteeringProgram runs the XDP program on frames (BPF_PROG_TEST_RUN):
// a frame ending in wpg's signature is redirected to the queue's socket,
// anything else (no signature, too short, the magic elsewhere) passes to
// the stack, and a signed frame on a queue without a socket passes too.
func TestSteeringProgram(t *testing.T) {
	testbed.RequireRoot(t)
	st, err := load(2)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(Config{Ifindex: lo.Index, Queue: 0, ChunkSize: 2048, Chunks: 16, Fill: 16, Comp: 2, RX: 16, Mode: Copy})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := st.Add(0, s.FD()); err != nil {
		t.Fatal(err)
	}
	signed := func(n int) []byte {
		b := make([]byte, n)
		frame.PutSignature(b, frame.Signature{Stream: 3, Seq: 7, Workers: 1, TxNs: 42})
		return b
	}
	magicFirst := make([]byte, 64)
	copy(magicFirst[14:], signed(34)[14:]) // the magic right after the header, not at the end
	const pass, redirect = 2, 4
	for _, c := range []struct {
		name  string
		frame []byte
		want  uint32
	}{
		{"signed 64 B", signed(64), redirect},
		{"signed 1514 B", signed(1514), redirect},
		{"signed, shortest", signed(34), redirect},
		{"too short for a signature", signed(34)[1:], pass},
		{"unsigned", make([]byte, 64), pass},
		{"magic not at the end", magicFirst, pass},
	} {
		ctx := struct {
			Data, DataEnd, DataMeta, Ifindex, RxQueue, Egress uint32
		}{DataEnd: uint32(len(c.frame)), Ifindex: uint32(lo.Index)}
		ret, err := st.prog.Run(&ebpf.RunOptions{Data: c.frame, Context: ctx})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if ret != c.want {
			t.Errorf("%s: XDP action %d, want %d", c.name, ret, c.want)
		}
	}
	// A signed frame on a queue without a socket passes to the stack.
	empty, err := load(1)
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	if ret, err := empty.prog.Run(&ebpf.RunOptions{Data: signed(64)}); err != nil || ret != pass {
		t.Errorf("queue without a socket: action %d, %v; want %d", ret, err, pass)
	}
}
