//go:build !linux

package afpacket

import (
	"context"
	"errors"
	"runtime"

	"github.com/wpg-dev/wpg/backend"
)

// ErrNotSupported is returned on systems without AF_PACKET.
var ErrNotSupported = errors.New("afpacket: AF_PACKET is Linux only, not supported on " + runtime.GOOS)

func newSender(context.Context, backend.Options) (backend.Sender, error) {
	return nil, ErrNotSupported
}

func newReceiver(context.Context, backend.Options) (backend.Receiver, error) {
	return nil, ErrNotSupported
}
