//go:build !linux

package pipe

import "github.com/wpg-dev/wpg/backend"

var open = backend.LinuxOnly("pipe", "a pipe between two processes")
