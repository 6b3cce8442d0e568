package afxdp

import (
	"fmt"

	"github.com/wpg-dev/wpg/backend"
)

func init() {
	backend.Register(backend.Registration{
		Name:     "afxdp",
		Kind:     backend.KindNetwork,
		Summary:  "AF_XDP socket per worker with its own UMEM (frames rendered in place), need_wakeup kicks; XDP-steered receiver",
		Open:     open,
		Receives: true,
		Options:  []string{"interface", "ring_depth", "ring_bytes", "queue", "xdp_mode", "busy_poll"},
		Check:    check,
	})
}

// Modes reported in Info().Mode.
const (
	ModeCopy     = "copy"
	ModeZeroCopy = "zero-copy"
)

// XDP modes (Options.Net.XDPMode).
const (
	XDPAuto    = "auto"
	XDPNative  = "native"
	XDPGeneric = "generic"
)

// CheckXDPMode reports whether m names an XDP mode ("" is auto).
func CheckXDPMode(m string) error {
	switch m {
	case "", XDPAuto, XDPNative, XDPGeneric:
		return nil
	}
	return fmt.Errorf("--xdp-mode %q: use auto, native (zero-copy, driver mode) or generic (copy, SKB mode)", m)
}

func check(o backend.Options) error {
	if err := CheckXDPMode(o.Net.XDPMode); err != nil {
		return err
	}
	if o.Net.Queue < 0 {
		return fmt.Errorf("--queue %d: give a queue number of 0 or more", o.Net.Queue)
	}
	return nil
}
