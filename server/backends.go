package server

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/sysinfo"
)

// BackendInfo is one registered backend and whether this server can run
// it (GET /api/v1/backends).
type BackendInfo struct {
	Name         string `json:"name"`
	Kind         string `json:"kind"`
	Summary      string `json:"summary"`
	Receives     bool   `json:"receives"`
	Payload      bool   `json:"payload"`
	SingleWorker bool   `json:"single_worker"`
	NeedsPeer    bool   `json:"needs_peer"`
	// Options are the backend-specific options it reads (JSON names).
	Options []string `json:"options"`
	// Runnable is false when this server cannot run it; WhyNot says why
	// and how to put it right.
	Runnable bool   `json:"runnable"`
	WhyNot   string `json:"why_not,omitempty"`
	// Needs says what a job of it must give (a peer, a FIFO).
	Needs string `json:"needs,omitempty"`
	// StartReceiver says what start_receiver does for a job of it (the
	// server starts wpg recv; it receives on a second port); absent where
	// start_receiver is refused (null, memcpy, pcapfile: receiverFor).
	StartReceiver string `json:"start_receiver,omitempty"`
	// Lacks lists the kernel features of this backend that the host's
	// probes found not supported (sysinfo: "afxdp: …"), with their
	// minimum kernel: what of it will not work here.
	Lacks []string `json:"lacks,omitempty"`
}

// backendCaps are the capabilities a backend needs to open at all.
var backendCaps = map[string][]string{
	"afpacket": {"CAP_NET_RAW"},
	"afxdp":    {"CAP_NET_RAW", "CAP_BPF"},
	"pcap":     {"CAP_NET_RAW"},
	"dpdk":     {"CAP_SYS_ADMIN"},
}

// backendDevices are the device nodes a backend cannot open without: a
// backend is runnable when one matches its pattern (filepath.Glob).
var backendDevices = map[string]struct{ pattern, why string }{
	"xpmem": {"/dev/xpmem", "needs /dev/xpmem, which the XPMEM kernel module provides: load it (modprobe xpmem), or use shm or cma"},
	"udmabuf": {"/dev/udmabuf*", "needs a DMA buffer device: /dev/udmabuf (the mainline driver, CONFIG_UDMABUF: modprobe udmabuf) or /dev/udmabufN (ikwzm's u-dma-buf module); " +
		"wpg dmabuf info lists what this host has (docs/dmabuf.md), or use shm"},
}

// globDevices finds the device nodes matching a pattern (a variable for
// the tests).
var globDevices = filepath.Glob

// Backends lists the registered backends with what this server can run.
func (s *Server) Backends() []BackendInfo {
	feats := s.opt.Probes.Features()
	out := []BackendInfo{}
	for _, r := range backend.All() {
		b := BackendInfo{Name: r.Name, Kind: string(r.Kind), Summary: r.Summary, Receives: r.Receives, Payload: r.Payload,
			SingleWorker: r.SingleWorker, NeedsPeer: r.NeedsPeer, Runnable: true, Options: []string{}}
		b.Options = append(b.Options, r.Options...)
		var missing []string
		for _, c := range backendCaps[r.Name] {
			if !s.opt.Caps(c) {
				missing = append(missing, c)
			}
		}
		if missing != nil {
			b.Runnable = false
			b.WhyNot = "needs " + strings.Join(missing, " and ") + ": run wpg serve as root, or `sudo setcap " + strings.ToLower(strings.Join(missing, ",")) + "+ep $(which wpg)`"
		}
		if d, ok := backendDevices[r.Name]; ok && b.Runnable {
			if m, err := globDevices(d.pattern); err != nil || len(m) == 0 {
				b.Runnable, b.WhyNot = false, d.why
			}
		}
		for _, f := range feats {
			if name, _, ok := strings.Cut(f.Name, ": "); ok && name == r.Name && f.Status == sysinfo.NotSupported {
				b.Lacks = append(b.Lacks, fmt.Sprintf("%s (Linux %s)", f.Name, f.MinKernel))
			}
		}
		switch {
		case r.Name == "pipe":
			b.Needs = "fifo (a FIFO another process reads) or start_receiver: a job of wpg serve has no standard output"
		case r.NeedsPeer:
			b.Needs = "start_receiver (the server starts wpg recv) or connect (a wpg recv --listen socket)"
		}
		switch {
		case r.NeedsPeer:
			b.StartReceiver = "the server starts wpg recv, which counts what arrives (unless connect or fifo is given)"
		case r.Kind == backend.KindNetwork && r.Name != "pcapfile":
			b.StartReceiver = "the job receives on a second port: rx_interface (with rx_netns), or else the veth peer of interface, wherever it is"
		}
		out = append(out, b)
	}
	return out
}
