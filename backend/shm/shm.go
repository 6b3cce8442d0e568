package shm

import (
	"math/bits"

	"github.com/wpg-dev/wpg/backend"
)

func init() {
	backend.Register(backend.Registration{
		Name:      "shm",
		Kind:      backend.KindLocal,
		Summary:   "a ring of slots in a memfd shared by sender and receiver processes",
		Open:      open,
		Receives:  true,
		Payload:   true,
		NeedsPeer: true,
		Options:   []string{"connect", "listen", "recv_mode", "busy_wait", "slots"},
		Check: func(o backend.Options) error {
			switch o.Mem.RecvMode {
			case "", "inplace", "copy":
				return nil
			}
			return backend.Errorf("shm", "--recv-mode %q: choose inplace (the default) or copy", o.Mem.RecvMode)
		},
	})
}

const (
	ringBudget  = 16 << 20 // default ring size target in bytes
	maxDefSlots = 32768
	copyBudget  = 1 << 20 // bytes copied out per Next in copy mode (cache-sized)
	// cacheMinFrame … cacheMaxFrame: frame strides that get a two-slot ring.
	cacheMinFrame = 128 << 10
	cacheMaxFrame = 2<<20 + 64
)

// DefaultSlots is the slot count used when --slots is not given: two for
// frames of 128 KiB … 2 MiB, so that the ring stays in the receiver's L2
// from frame to frame (the sender rewrites only header and stamps of a slot;
// verified, in place: 19.4 → 29.7 GB/s at 1 MiB, 20.4 → 35.3 at 460,800 B,
// 21.3 → 28.4 at 128 KiB, medians of alternated runs; 4 MiB unchanged);
// otherwise about 16 MiB of ring, at least 4 slots (2 above 64 MiB
// frames), at most 32768 (a deep ring for small frames rides out wake-up
// latencies).
func DefaultSlots(maxFrame int) int {
	stride := (maxFrame + 63) &^ 63
	if stride >= cacheMinFrame && stride <= cacheMaxFrame {
		return 2
	}
	n := ringBudget / stride
	minSlots := 4
	if stride > 64<<20 {
		minSlots = 2
	}
	if n < minSlots {
		return minSlots
	}
	n = 1 << (bits.Len(uint(n)) - 1)
	return min(n, maxDefSlots)
}
