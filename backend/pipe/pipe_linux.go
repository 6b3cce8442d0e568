//go:build linux

package pipe

import (
	"time"

	"github.com/wpg-dev/wpg/backend"
)

// open opens the backend for one job: a sender per worker and a
// receiver, each from the options alone.
var open = backend.Factories{Sender: newSender, Receiver: newReceiver}.Open

const (
	pageSize      = 4096
	stagingBudget = 8 << 20 // bytes of frames handed out per Reserve, at least one frame
	groupBytes    = 64 << 10
	wholeFrameMin = 64 << 10
	// spinWait is how long the receiver retries an empty pipe before it
	// sleeps in poll(2).
	spinWait = 200 * time.Microsecond
)
