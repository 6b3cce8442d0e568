package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/cmd/wpg/cli/config"
	"github.com/wpg-dev/wpg/units"
)

// runFlags are the flags `wpg send` and `wpg bench` share.
type runFlags struct {
	backend     string
	iface       string
	batch       int
	ringDepth   int
	ringBytes   string
	noTxRing    bool
	txCopy      string
	qdiscBypass bool
	workers     int
	pinCore     int
	pinCores    string
	autoPin     bool
	queue       int
	xdpMode     string
	busyPoll    bool
	dpdkArgs    string
	clock       string
	duration    time.Duration
	count       uint64
	json        bool
	output      string
	format      string

	// send only (bench has them too, with bench defaults)
	rate                string
	rateLayer           string
	failUnder           float64
	burst               int
	rtPriority          int
	wait                string
	wakeBoost           string
	plan                string
	prerenderMaxBytes   string
	prerenderMaxPackets int64

	// payload frames and local paths
	size        string
	raw         bool
	fill        string
	payloadFile string
	seed        uint64
	verify      string
	fifo        string
	vmsplice    bool
	connect     string
	recvMode    string
	busyWait    bool
	slots       int
	pipeSize    string

	// device paths (udmabuf)
	device   string
	osync    bool
	syncMode int

	// reports (run.go: addReportFlags)
	interval   time.Duration
	jsonStream bool
	hdrOut     string
	repeat     int // bench only

	// send --pcap (send.go)
	pcap      string
	pcapSpeed float64

	// origins names the spec's fields that wpg.toml gave (defaults.go).
	origins origins

	// send's port pair (send.go: addPairFlags)
	rxIface, rxBackend string
	netns, rxNetns     string
	srcIP, gateway     string
	rxSrcIP, rxGateway string
	bidir              bool

	// send --segment and --metrics-listen (send.go, metrics.go)
	segment string
	metrics metricsFlags
	live    liveRun
}

func addRunFlags(cmd *cobra.Command, f *runFlags, bench bool) {
	fl := cmd.Flags()
	defBatch, defDuration := 64, time.Duration(0)
	if bench {
		defBatch, defDuration = 256, 10*time.Second
	}
	fl.StringVar(&f.backend, "backend", "", "data path: "+strings.Join(backend.Known(), ", ")+" (default: afpacket with -i, else null; wpg sysinfo lists those this build has)")
	fl.StringVarP(&f.iface, "interface", "i", "", "network interface (afpacket, afxdp)")
	fl.IntVar(&f.batch, "batch", defBatch, "frames handed to the backend per call")
	fl.IntVar(&f.ringDepth, "ring-depth", 4096, "TX ring slots (afpacket; afxdp: TX ring and UMEM chunks, a power of two), capped by --ring-bytes")
	fl.StringVar(&f.ringBytes, "ring-bytes", "16MiB", "cap on one worker's TX ring / UMEM memory (config tx.ring_bytes)")
	fl.BoolVar(&f.noTxRing, "no-tx-ring", false, "afpacket: use sendmmsg instead of the TPACKET_V3 TX ring")
	fl.BoolVar(&f.qdiscBypass, "qdisc-bypass", false, "afpacket: bypass the qdisc layer (PACKET_QDISC_BYPASS)")
	fl.StringVar(&f.txCopy, "tx-copy", "auto", "afpacket TX ring: auto (fragments on NICs and for frames of 256 B+ on lo, linear on veth), linear (copy each frame into the skb head), frags (attach the ring pages, no copy)")
	fl.IntVar(&f.workers, "workers", 1, "sender workers, each an OS thread with its own backend instance (at most 256)")
	fl.IntVar(&f.pinCore, "pin-core", -1, "pin the (single) worker to this CPU (-1: no pinning)")
	fl.StringVar(&f.pinCores, "pin-cores", "", "pin worker i to the i-th CPU of this list (e.g. 2,3 or 2-5)")
	fl.BoolVar(&f.autoPin, "auto-pin", false, "pin workers to allowed CPUs, the NIC's NUMA node first, CPU 0 last")
	fl.IntVar(&f.queue, "queue", 0, "first NIC queue (afxdp, dpdk): worker i uses queue+i")
	fl.StringVar(&f.xdpMode, "xdp-mode", "auto", "afxdp: auto (zero-copy where the driver has it, else copy mode), native (zero-copy or an error), generic (copy mode)")
	fl.BoolVar(&f.busyPoll, "busy-poll", false, "afxdp: busy polling (SO_PREFER_BUSY_POLL, SO_BUSY_POLL, SO_BUSY_POLL_BUDGET)")
	fl.StringVar(&f.dpdkArgs, "dpdk-args", "", "dpdk: EAL arguments, e.g. \"--no-huge -m 512 --no-pci --vdev net_null0\" (config dpdk.eal_args; builds with -tags dpdk; docs/dpdk.md)")
	fl.StringVar(&f.clock, "clock", "auto", "clock for timestamps and pacing: auto (TSC when invariant), tsc, monotonic")
	fl.DurationVar(&f.duration, "duration", defDuration, "stop after this long (0 = no limit)")
	fl.Uint64Var(&f.count, "count", 0, "stop after this many frames in total (0 = the template's counts)")
	fl.BoolVar(&f.json, "json", false, "print the report as JSON (docs/report.md)")
	fl.StringVarP(&f.output, "output", "o", "", "pcapfile: output file")
	fl.StringVar(&f.format, "format", "", "pcapfile: pcap or pcapng (default: from the file name, else pcap)")

	fl.StringVar(&f.rate, "rate", "", "target rate: 1Mpps, 250kpps, 15fps, 10Gbps, 500Mbps, ifg=10us, 50% (of -i's link speed); TRex's 1mpps, tc's 100mbit, iperf3's 10M too (docs/rate.md) (default flat out)")
	fl.StringVar(&f.rateLayer, "rate-layer", "l2", "bit rates (--rate and the report's) count l2 frame bytes, or l1 (+24 B per frame: FCS, preamble and inter-frame gap)")
	fl.Float64Var(&f.failUnder, "fail-under", 0, "with --rate: exit 3 when the achieved rate is under this share `RATIO` of the target (0 < RATIO <= 1, e.g. 0.95)")
	fl.IntVar(&f.rtPriority, "rt-priority", 0, "run paced worker threads under SCHED_FIFO at this priority (1-99; needs CAP_SYS_NICE)")
	fl.IntVar(&f.burst, "burst", 0, "frames per rate-control grant (0 = automatic)")
	fl.StringVar(&f.wait, "wait", "hybrid", "how the sender waits for the next grant: spin, sleep, hybrid")
	fl.StringVar(&f.wakeBoost, "wake-boost", "auto", "--wait hybrid: SCHED_FIFO during its long sleeps, so the sender runs the moment its timer fires: auto (where permitted), on, off")
	fl.StringVar(&f.plan, "plan", "auto", "frame production: auto, prerender, stream")
	fl.StringVar(&f.prerenderMaxBytes, "prerender-max-bytes", "256MiB", "pre-render at most this many bytes (config tx.prerender_max_bytes)")
	fl.Int64Var(&f.prerenderMaxPackets, "prerender-max-packets", 100_000_000, "pre-render at most this many frames (config tx.prerender_max_packets)")

	fl.StringVar(&f.size, "size", "", "local and device paths: payload bytes per frame (64 … 1GiB; each frame adds a 32-byte header unless --raw); network backends: frame size of the default template; 1KB = 1000, 1KiB = 1024")
	fl.BoolVar(&f.raw, "raw", false, "payload only, no wpg header (for feeding other programs, e.g. ffmpeg)")
	fl.StringVar(&f.fill, "fill", "pattern", "payload content: pattern, random (seeded), file")
	fl.StringVar(&f.payloadFile, "payload-file", "", "payload content from this file (implies --fill file)")
	fl.Uint64Var(&f.seed, "seed", 1, "seed for random payloads")
	fl.StringVar(&f.verify, "verify", "on", "payload checksums: on, sample, off (pure bandwidth)")
	fl.StringVar(&f.fifo, "fifo", "", "pipe: write into this FIFO instead of stdout")
	fl.BoolVar(&f.vmsplice, "vmsplice", false, "pipe: vmsplice(2) pages instead of write(2)")
	fl.StringVar(&f.connect, "connect", "", "local paths: meet a receiver started independently with wpg recv --listen `SOCK`")
	fl.StringVar(&f.recvMode, "recv-mode", "", "shm: inplace (default) or copy; cma: readv (default, the receiver pulls) or writev (the sender pushes)")
	fl.BoolVar(&f.busyWait, "busy-wait", false, "shm: poll instead of sleeping when idle")
	fl.IntVar(&f.slots, "slots", 0, "shm, udmabuf: ring slots; cma, xpmem: staging slots (0 = automatic)")
	fl.StringVar(&f.device, "device", "", "udmabuf: the DMA buffer, /dev/udmabufN (ikwzm's u-dma-buf) or /dev/udmabuf (mainline, a buffer of --slots frames made from a sealed memfd)")
	fl.BoolVar(&f.osync, "sync", false, "udmabuf (u-dma-buf): open the device with O_SYNC, so that --sync-mode chooses the CPU mapping")
	fl.IntVar(&f.syncMode, "sync-mode", -1, "udmabuf (u-dma-buf): sync_mode 0-7 written to sysfs before the open and restored after (with O_SYNC: 0 cached, 1 non-cached, 2 write-combine, 3 DMA-coherent; +4 applies it without O_SYNC); -1 leaves the device's")
	fl.StringVar(&f.pipeSize, "pipe-size", "", "pipe: capacity to ask for, e.g. 64KiB (default /proc/sys/fs/pipe-max-size)")
}

// applyConfig overlays flags the user set on the configuration (defaults <
// file < flags) and returns the effective configuration.
func applyConfig(cmd *cobra.Command, f *runFlags) (*config.Config, error) {
	cfg, err := loadConfig(cmd)
	if err != nil {
		return nil, err
	}
	fl := cmd.Flags()
	for _, size := range []struct{ flag, key, value string }{
		{"ring-bytes", "tx.ring_bytes", f.ringBytes},
		{"prerender-max-bytes", "tx.prerender_max_bytes", f.prerenderMaxBytes},
	} {
		if !fl.Changed(size.flag) {
			continue
		}
		n, err := units.ParseSize(size.value)
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", size.flag, err)
		}
		if err := cfg.Set(size.key, n, "--"+size.flag); err != nil {
			return nil, err
		}
	}
	if fl.Changed("prerender-max-packets") {
		if err := cfg.Set("tx.prerender_max_packets", f.prerenderMaxPackets, "--prerender-max-packets"); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// parsePipeSize parses --pipe-size ("" = 0, the backend's default).
func parsePipeSize(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := units.ParseSize(s)
	if err != nil || n < 4096 || n > 1<<31 {
		return 0, fmt.Errorf("--pipe-size %q: give a size from 4KiB to 2GiB, e.g. 64KiB or 1MiB", s)
	}
	return int(n), nil
}
