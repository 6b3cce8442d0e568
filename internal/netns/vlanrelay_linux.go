//go:build linux

package netns

import (
	"github.com/mdlayher/packet"

	"github.com/wpg-dev/wpg/internal/sys"
)

// bigBuffer gives c's socket a receive buffer of 16 MiB, over
// net.core.rmem_max (SO_RCVBUFFORCE, as root).
func bigBuffer(c *packet.Conn) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	return sys.SetsockoptInt(rc, sys.SolSocket, sys.SoRcvbufForce, 16<<20)
}
