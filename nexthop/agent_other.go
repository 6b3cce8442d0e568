//go:build !linux

package nexthop

import (
	"fmt"
	"runtime"
)

// Open is Linux only: it needs an AF_PACKET socket.
func Open(iface string, port Port, o Options) (*Agent, error) {
	return nil, fmt.Errorf("port %s: next-hop resolution is not supported on %s (it needs AF_PACKET, Linux)", iface, runtime.GOOS)
}
