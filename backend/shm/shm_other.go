//go:build !linux

package shm

import "github.com/wpg-dev/wpg/backend"

var open = backend.LinuxOnly("shm", "a memfd ring shared by two processes")
