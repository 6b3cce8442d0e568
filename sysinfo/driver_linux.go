//go:build linux

package sysinfo

import "github.com/wpg-dev/wpg/internal/sys"

// liveDriver asks the running kernel for an interface's driver.
var liveDriver = sys.EthtoolDriver
