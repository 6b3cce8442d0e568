//go:build !linux

package unix

import "github.com/wpg-dev/wpg/backend"

var open = backend.LinuxOnly("unix", "a unix stream socket with a receiver process")
