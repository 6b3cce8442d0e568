//go:build !linux

package membench

import (
	"context"
	"errors"
	"runtime"
)

// Run is Linux-only (memfd, process_vm_readv, /dev/xpmem).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	return nil, errors.New("membench: not supported on " + runtime.GOOS + ": it needs Linux")
}

// ServePeer is Linux-only.
func ServePeer() error {
	return errors.New("membench: not supported on " + runtime.GOOS + ": it needs Linux")
}
