//go:build dpdk && linux

package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// TestQA8bDPDKErrorsNameDPDKOnce: DPDK's refusals read "backend dpdk:
// dpdk: …", and a missing -i suggested "-i lo" (a kernel interface, which
// no DPDK port is). Each now begins "wpg: dpdk:" once, and the missing
// port is asked for as a port id or device name. The refusal of --help,
// which names its own fix, no longer gets a generic one after it.
func TestQA8bDPDKErrorsNameDPDKOnce(t *testing.T) {
	cleanDPDK(t)
	bin := wpgTagged(t, "dpdk")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"eal init failure", []string{"--dpdk-args", ealBase + " --vdev net_bogus0", "-i", "0"}, "wpg: dpdk: EAL initialisation with arguments"},
		{"no such port", []string{"--dpdk-args", ealBase + " --vdev net_null0", "-i", "net_nope9"}, `wpg: dpdk: no port "net_nope9"`},
		{"eal help exits", []string{"--dpdk-args", ealBase + " --help", "-i", "0"}, "wpg: dpdk: EAL argument --help prints the EAL's usage and exits the process: drop it from --dpdk-args"},
		{"no port named", []string{"--dpdk-args", ealBase + " --vdev net_null0"}, "wpg: -i/--interface is needed: backend dpdk sends on a network interface; add -i PORT, a DPDK port's id or device name (e.g. -i 0"},
	} {
		cmd := exec.Command(bin, append([]string{"send", "--backend", "dpdk", "--count", "10"}, c.args...)...)
		cmd.Dir = t.TempDir()
		_, errs, code := runCmd(t, cmd)
		var line string
		for _, l := range strings.Split(errs, "\n") {
			if strings.HasPrefix(l, "wpg: ") {
				line = l
			}
		}
		if code == 0 || !strings.HasPrefix(line, c.want) || strings.Contains(line, "dpdk: dpdk:") || strings.Contains(line, "backend dpdk: ") || strings.Contains(line, "-i lo") ||
			strings.Contains(line, "change the setting it names") {
			t.Errorf("%s: exit %d, error line %q; want it to begin %q, dpdk named once", c.name, code, line, c.want)
		}
	}
}
