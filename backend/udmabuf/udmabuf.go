package udmabuf

import (
	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/dmabuf"
	"github.com/wpg-dev/wpg/peer"
)

func init() {
	backend.Register(backend.Registration{
		Name:      "udmabuf",
		Kind:      backend.KindDevice,
		Summary:   "frames written in place into a DMA buffer (u-dma-buf /dev/udmabufN or mainline /dev/udmabuf), honouring its cache mode",
		Open:      open,
		Receives:  true,
		Payload:   true,
		NeedsPeer: true,
		Options:   []string{"connect", "listen", "slots", "device", "sync", "sync_mode"},
		Check:     check,
	})
}

const (
	// budget is the default buffer share of one worker on mainline (a
	// u-dma-buf buffer is split among the workers as it is).
	budget   = 16 << 20
	maxSlots = 1024
)

func check(o backend.Options) error {
	if o.Listen == "" && o.Device.Device == "" {
		return backend.Errorf("udmabuf", "--device is required: /dev/udmabufN (ikwzm's u-dma-buf) or /dev/udmabuf (mainline, CONFIG_UDMABUF)")
	}
	if o.Device.SyncMode != nil {
		if err := dmabuf.CheckSyncMode(*o.Device.SyncMode); err != nil {
			return backend.Errorf("udmabuf", "--sync-mode: %w", err)
		}
	}
	return peer.CheckSlots("udmabuf", o.Mem.Slots, maxSlots)
}
