//go:build linux

package afxdp

import (
	"github.com/wpg-dev/wpg/backend/afxdp/internal/xsk"
	"github.com/wpg-dev/wpg/sysinfo"
)

func init() {
	sysinfo.RegisterProbe(sysinfo.Probe{Name: "afxdp: AF_XDP sockets", MinKernel: "4.18", Run: func() (sysinfo.Status, string) {
		err := xsk.Probe()
		if xsk.IsNoFamily(err) {
			return sysinfo.NotSupported, "the kernel has no CONFIG_XDP_SOCKETS"
		}
		return sysinfo.ProbeResult(err, "needs CAP_NET_RAW to open an AF_XDP socket")
	}})
	sysinfo.RegisterProbe(sysinfo.Probe{Name: "afxdp: receiver's XDP program (bpf_xdp_load_bytes)", MinKernel: "5.18", Run: func() (sysinfo.Status, string) {
		return sysinfo.ProbeResult(xsk.ProbeProgram(), "needs CAP_BPF (or root) to load a program")
	}})
}
