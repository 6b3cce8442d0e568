//go:build linux

package sysinfo

import "github.com/wpg-dev/wpg/internal/sys"

// haveLiveDriver says whether liveDriver can ask the kernel.
const haveLiveDriver = true

// liveDriver asks the running kernel for an interface's driver.
func liveDriver(name string) (string, error) { return sys.EthtoolDriver(name) }
