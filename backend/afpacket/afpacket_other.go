//go:build !linux

package afpacket

import (
	"context"
	"errors"
	"runtime"

	"github.com/wpg-dev/wpg/backend"
)

// ErrNotSupported is returned on systems without AF_PACKET.
var ErrNotSupported = &backend.Error{Backend: "afpacket", Err: errors.New("AF_PACKET is Linux only, not supported on " + runtime.GOOS)}

func open(context.Context, backend.Options) (backend.Instance, error) {
	return nil, ErrNotSupported
}
