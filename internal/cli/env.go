package cli

import (
	"os"
	"runtime"
)

// environment returns the machine description embedded in reports.
var environment = func(iface string) any {
	host, _ := os.Hostname()
	return map[string]any{"host": host, "cpus": runtime.NumCPU(), "go": runtime.Version(), "interface": iface}
}
