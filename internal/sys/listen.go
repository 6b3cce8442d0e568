package sys

import (
	"errors"
	"syscall"
)

// ListenHint says what to do about a failed listen on a TCP address: the
// port in use, a privileged port, an address this host does not have; ""
// for other errors.
func ListenHint(err error) string {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return "another program (or another wpg serve) has that port; stop it, or give another with --listen (host:0 takes any free port and prints it at start); `ss -ltnp` shows who listens"
	case errors.Is(err, syscall.EACCES):
		return "ports below 1024 need CAP_NET_BIND_SERVICE; give a port of 1024 or more with --listen"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return "no interface of this host has that address; use 127.0.0.1, or an address `ip addr` lists"
	}
	return ""
}
