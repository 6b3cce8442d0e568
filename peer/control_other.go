//go:build !linux

package peer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/wpg-dev/wpg/recv"
)

// Control is the receiving side of the peer protocol's control
// connection; the local paths are Linux only.
type Control struct {
	Listener *net.UnixListener
	Conn     *net.UnixConn
	Request  RecvRequest
}

// AcceptRequest is not supported on this system.
func AcceptRequest(ctx context.Context, path string) (*Control, error) {
	return nil, fmt.Errorf("receiver on %s: the local paths need Linux: %w", path, errors.ErrUnsupported)
}

// Accept is not supported on this system.
func (c *Control) Accept() error { return errors.ErrUnsupported }

// Refuse returns err.
func (c *Control) Refuse(err error) error { return err }

// CloseListener does nothing.
func (c *Control) CloseListener() {}

// ProgressEvery is 0: no sender can ask for progress here.
func (c *Control) ProgressEvery() time.Duration { return 0 }

// Progress does nothing.
func (c *Control) Progress(recv.Progress) {}

// Answer does nothing.
func (c *Control) Answer(recv.Result, error) {}

// Close does nothing.
func (c *Control) Close() {}
