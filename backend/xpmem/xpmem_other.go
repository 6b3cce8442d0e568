//go:build !linux

package xpmem

import "github.com/wpg-dev/wpg/backend"

var open = backend.LinuxOnly("xpmem", "XPMEM attach of another process's memory")
