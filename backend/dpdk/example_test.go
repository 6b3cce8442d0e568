//go:build dpdk && linux && cgo

package dpdk_test

import (
	"context"
	"fmt"

	"github.com/wpg-dev/wpg/backend"
	_ "github.com/wpg-dev/wpg/backend/dpdk"
)

// Example opens the dpdk backend on DPDK's net_null sink (no NIC, no
// hugepages), sends one burst of 64-byte frames from one worker on TX
// queue 0 and reads the report's counters. It runs as root, in a process
// whose EAL these arguments initialise.
func Example() {
	reg, err := backend.Lookup("dpdk")
	if err != nil {
		fmt.Println(err)
		return
	}
	inst, err := reg.Open(context.Background(), backend.Options{
		Workers: 1, MaxFrame: 64, Batch: 32,
		Net:  backend.NetOptions{Interface: "net_null0"},
		DPDK: backend.DPDKOptions{EALArgs: []string{"--no-huge", "-m", "256", "--no-shconf", "--no-telemetry", "--no-pci", "--vdev", "net_null0"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer inst.Close()
	s, err := inst.NewSender(backend.Worker{Index: 0, MaxFrame: 64})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	bufs, lens := make([][]byte, 32), make([]int, 32)
	n, _ := s.Reserve(bufs)
	for i := range n {
		copy(bufs[i], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}) // a frame rendered in place
		lens[i] = 64
	}
	sent, err := s.Commit(lens[:n])
	fmt.Println(sent, err, s.Info().Details["driver"], s.Info().Details["tx_bursts"])
}
