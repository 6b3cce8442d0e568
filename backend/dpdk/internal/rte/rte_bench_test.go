//go:build dpdk && linux

package rte

import (
	"fmt"
	"os"
	"runtime"
	"testing"
)

// BenchmarkTxNull measures the DPDK side of a burst alone on net_null:
// hand out 64 mbufs, write one byte into each, commit them (the sink
// frees them, the same crossing allocates the next burst). ns/op is per
// frame.
func BenchmarkTxNull(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root (DPDK)")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	prefix := fmt.Sprintf("wpg-bench-%d", os.Getpid())
	if err := Init([]string{"--no-huge", "-m", "256", "--no-shconf", "--no-telemetry", "--no-pci", "--file-prefix", prefix, "--vdev", "net_null0"}); err != nil {
		b.Fatal(err)
	}
	defer os.Remove("/var/run/dpdk") // only when empty
	defer os.RemoveAll("/var/run/dpdk/" + prefix)
	if _, err := RegisterThread(); err != nil {
		b.Fatal(err)
	}
	defer UnregisterThread()
	// Rooms for 64-byte frames, as the backend makes them (mbufRoom).
	pool, err := NewPool("bench_tx", 4095, 256, 64+Headroom, -1)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Free()
	if _, _, err := Setup(0, 0, 1, 0, 1024, -1, nil); err != nil {
		b.Fatal(err)
	}
	defer Stop(0)
	q := NewTxQueue(0, 0, pool, 64, 64)
	defer q.Close()
	bufs := make([][]byte, 64)
	lens := make([]int, 64)
	for i := range lens {
		lens[i] = 64
	}
	b.ResetTimer()
	for sent := 0; sent < b.N; {
		n := q.Reserve(bufs)
		sent += n
		for i := range n {
			bufs[i][0] = byte(i)
		}
		if left := q.Commit(lens[:n], 16); left != 0 {
			b.Fatalf("%d left", left)
		}
	}
}
