package server

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// capBits are the capabilities the backends need, by number.
var capBits = map[string]uint{"CAP_NET_ADMIN": 12, "CAP_NET_RAW": 13, "CAP_IPC_LOCK": 14, "CAP_SYS_ADMIN": 21, "CAP_SYS_NICE": 23, "CAP_BPF": 39}

// hasCap reads the effective capability set of this process.
func hasCap(name string) bool {
	bit, ok := capBits[name]
	if !ok {
		return false
	}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && n&(1<<bit) != 0
		}
	}
	return false
}
