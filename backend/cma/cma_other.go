//go:build !linux

package cma

import "github.com/wpg-dev/wpg/backend"

var open = backend.LinuxOnly("cma", "process_vm_readv between two processes")
