package xpmem

import (
	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/peer"
)

func init() {
	backend.Register(backend.Registration{
		Name:      "xpmem",
		Kind:      backend.KindLocal,
		Summary:   "XPMEM attach of the sender's memory, frames read in place (where /dev/xpmem exists)",
		Open:      open,
		Receives:  true,
		Payload:   true,
		NeedsPeer: true,
		Options:   []string{"connect", "listen", "slots"},
		Check:     func(o backend.Options) error { return peer.CheckSlots("xpmem", o.Mem.Slots, maxSlots) },
	})
}

const (
	stagingBudget = 16 << 20
	maxSlots      = 1024
	exportMode    = 0o600
)
