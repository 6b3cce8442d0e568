package afpacket

import (
	"github.com/wpg-dev/wpg/backend"
)

func init() {
	backend.Register(backend.Registration{
		Name:     "afpacket",
		Kind:     backend.KindNetwork,
		Summary:  "AF_PACKET TPACKET_V3 TX ring (one send() per batch), or sendmmsg; RX ring receiver",
		Open:     open,
		Receives: true,
		Options:  []string{"interface", "ring_depth", "ring_bytes", "no_tx_ring", "no_rx_ring", "tx_copy", "qdisc_bypass"},
	})
}

// Modes reported in Info().Mode.
const (
	ModeTxRing   = "tx-ring"
	ModeSendmmsg = "sendmmsg"
	ModeRxRing   = "rx-ring"
	ModeRecvmmsg = "recvmmsg"
)
