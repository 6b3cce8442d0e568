package cma

import (
	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/peer"
)

func init() {
	backend.Register(backend.Registration{
		Name:      "cma",
		Kind:      backend.KindLocal,
		Summary:   "process_vm_readv between two processes (stock kernel's cross-process copy)",
		Open:      open,
		Receives:  true,
		Payload:   true,
		NeedsPeer: true,
		Options:   []string{"connect", "listen", "recv_mode", "slots"},
		Check: func(o backend.Options) error {
			if _, err := modeOf(o.Mem.RecvMode); err != nil {
				return err
			}
			return peer.CheckSlots("cma", o.Mem.Slots, maxSlots)
		},
	})
}

const (
	stagingBudget = 4 << 20
	maxSlots      = 1024
	copyBudget    = 1 << 20 // receiver buffers per call: cache-sized
)

// modeOf maps --recv-mode to the cma transfer direction.
func modeOf(m string) (writev bool, err error) {
	switch m {
	case "", "inplace", "readv":
		return false, nil
	case "writev":
		return true, nil
	}
	return false, backend.Errorf("cma", "--recv-mode %q: choose readv (the receiver pulls, default) or writev (the sender pushes)", m)
}
