//go:build linux

package pipe

import (
	"time"

	"github.com/wpg-dev/wpg/backend"
)

func init() {
	backend.Register(backend.Registration{
		Name:      "pipe",
		Kind:      backend.KindLocal,
		Summary:   "a pipe or FIFO (stdout/stdin by default), enlarged to pipe-max-size; optional vmsplice",
		Open:      backend.Factories{Sender: newSender, Receiver: newReceiver}.Open,
		Receives:  true,
		Payload:   true,
		NeedsPeer: true,
		// One pipe carries one ordered stream of whole frames.
		SingleWorker: true,
		Flags:        []string{"fifo", "vmsplice", "pipe-size", "connect"},
	})
}

const (
	pageSize      = 4096
	stagingBudget = 8 << 20 // bytes of frames handed out per Reserve, at least one frame
	groupBytes    = 64 << 10
	wholeFrameMin = 64 << 10
	// spinWait is how long the receiver retries an empty pipe before it
	// sleeps in poll(2).
	spinWait = 200 * time.Microsecond
)
