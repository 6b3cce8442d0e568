//go:build pcap && linux && cgo

package pcap_test

import (
	"context"
	"fmt"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/backend/pcap"
)

// ExampleNewSender injects one batch of broadcast frames on lo through
// libpcap (as root, or with CAP_NET_RAW) and prints libpcap's version.
func ExampleNewSender() {
	s, err := pcap.NewSender(context.Background(), backend.Options{MaxFrame: 60, Batch: 8, Net: backend.NetOptions{Interface: "lo"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	bufs, lens := make([][]byte, 8), make([]int, 8)
	n, _ := s.Reserve(bufs)
	for i := range n {
		copy(bufs[i], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1, 0x88, 0xb5})
		lens[i] = 60
	}
	sent, err := s.Commit(lens[:n])
	fmt.Println(sent, err, s.Info().Details["libpcap"])
}
