package cli

import "github.com/wpg-dev/wpg/sysinfo"

// environment returns the machine description embedded in reports.
func environment(iface string) any { return sysinfo.Environment(iface) }
