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
		Flags:    []string{"interface", "ring-depth", "ring-bytes", "no-tx-ring", "no-rx-ring", "tx-copy", "qdisc-bypass"},
	})
}

// Modes reported in Info().Mode.
const (
	ModeTxRing   = "tx-ring"
	ModeSendmmsg = "sendmmsg"
	ModeRxRing   = "rx-ring"
	ModeRecvmmsg = "recvmmsg"
)
