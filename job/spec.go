package job

import "time"

// Spec is everything one sending run needs: what to send (a template, or
// payload frames), through which backend and its options, how fast, for
// how long, on which CPUs. It is a plain value with JSON tags, so a
// client can build it from flags (the CLI), a form or a stored job (a
// server).
//
// The zero value of a field means "not given": the default applies, and
// the field counts as unset for the rule that an option given to a backend
// or a kind of run that does not read it is an error (Validate). Limits
// holds site defaults (wpg.toml) that are not options of the run and are
// never refused.
type Spec struct {
	// Command labels the report: "send" (the default) or "bench".
	Command string `json:"command,omitempty"`

	// Template is the path of a *.wpg.yaml packet template; TemplateText
	// is the text of one (give at most one). Neither: the embedded default
	// template, or payload frames on local and device paths.
	Template     string `json:"template,omitempty"`
	TemplateText string `json:"template_text,omitempty"`
	// Pcap replays a pcap or pcapng capture instead (wpg send --pcap):
	// its frames as captured, with the capture's own timing (its gaps
	// divided by PcapSpeed, 0 = 1), or at Rate when one is given.
	Pcap      string  `json:"pcap,omitempty"`
	PcapSpeed float64 `json:"pcap_speed,omitempty"`

	// Backend names the data path ("" = afpacket when Interface is given,
	// else null).
	Backend string `json:"backend,omitempty"`

	// Network paths.
	Interface   string `json:"interface,omitempty"`
	RingDepth   int    `json:"ring_depth,omitempty"` // TX ring slots (0 = 4096)
	RingBytes   int64  `json:"ring_bytes,omitempty"` // cap on one worker's ring (0 = Limits.RingBytes)
	NoTxRing    bool   `json:"no_tx_ring,omitempty"`
	QdiscBypass bool   `json:"qdisc_bypass,omitempty"`
	TxCopy      string `json:"tx_copy,omitempty"` // auto (""), linear, frags
	Queue       *int   `json:"queue,omitempty"`   // first NIC queue (afxdp, dpdk)
	XDPMode     string `json:"xdp_mode,omitempty"`
	BusyPoll    bool   `json:"busy_poll,omitempty"`
	// DPDKArgs are the dpdk backend's EAL arguments, separated by blanks
	// ("--no-huge -m 512 --vdev net_null0"; config dpdk.eal_args).
	DPDKArgs string `json:"dpdk_args,omitempty"`

	// A port pair: a device under test between two network ports
	// (docs/device.md). RxInterface receives the run's frames on a second
	// port, in this process and on the same clock: the report's
	// verification is that port's receiver (lost, duplicated, reordered,
	// corrupted, latency, jitter per stream, frames that came back unsigned
	// or on a stream not sent there), and the run fails its check as a
	// local path's does. RxBackend receives there ("" = afpacket; any
	// backend that receives on a network interface).
	RxInterface string `json:"rx_interface,omitempty"`
	RxBackend   string `json:"rx_backend,omitempty"`
	// Netns and RxNetns are the ports' network namespaces: a name of
	// `ip netns` (/run/netns/NAME) or a namespace file (/proc/PID/ns/net);
	// "" is the caller's.
	Netns   string `json:"netns,omitempty"`
	RxNetns string `json:"rx_netns,omitempty"`
	// SrcIP gives the sending port an address with its link's prefix
	// (198.18.0.1/24, 2001:2:0:a::1/64) and Gateway its next hop: the run
	// resolves the gateway's MAC (ARP, Neighbor Discovery) on the port
	// before it starts, sends with it as the destination MAC (the port's
	// MAC and a fixed source address its own), and answers requests for
	// the port's address while it lasts. RxSrcIP and RxGateway are the
	// receiving port's (it answers for its address; with Bidir it sends
	// from it too). Each also comes from the template's ports: and from
	// Limits (wpg.toml [port]), in that order after the spec's.
	SrcIP     string `json:"src_ip,omitempty"`
	Gateway   string `json:"gateway,omitempty"`
	RxSrcIP   string `json:"rx_src_ip,omitempty"`
	RxGateway string `json:"rx_gateway,omitempty"`
	// Bidir sends from both ports at once: the template's streams A→B and
	// their mirror B→A (template.Mirror: addresses and ports swapped, or
	// the template's reverse: streams), each direction at Rate, counted
	// and judged apart (report.Directions).
	Bidir bool `json:"bidir,omitempty"`

	// Capture files (pcapfile).
	Output string `json:"output,omitempty"`
	Format string `json:"format,omitempty"` // pcap or pcapng ("" = from Output's name)

	// Local paths.
	FIFO     string `json:"fifo,omitempty"`     // pipe: write into this FIFO instead of Env.Stdout
	Vmsplice bool   `json:"vmsplice,omitempty"` // pipe
	// Connect is the rendezvous socket of a receiver started on its own
	// (wpg recv --listen).
	Connect string `json:"connect,omitempty"`
	// StartReceiver asks a local path that needs a receiving process, and
	// is given neither Connect nor FIFO, to start one of its own, whose
	// report becomes the run's verification (what wpg bench does).
	StartReceiver bool   `json:"start_receiver,omitempty"`
	RecvMode      string `json:"recv_mode,omitempty"` // shm: inplace, copy; cma: readv, writev
	BusyWait      bool   `json:"busy_wait,omitempty"` // shm
	Slots         int    `json:"slots,omitempty"`     // shm ring slots (0 = automatic)
	PipeSize      int64  `json:"pipe_size,omitempty"` // pipe capacity in bytes (0 = the system's maximum)

	// Device paths (udmabuf): the DMA buffer's node, /dev/udmabufN
	// (u-dma-buf) or /dev/udmabuf (mainline); u-dma-buf's O_SYNC and
	// sync_mode (0 … 7, written before the open and restored after; nil =
	// left as it is).
	Device   string `json:"device,omitempty"`
	Sync     bool   `json:"sync,omitempty"`
	SyncMode *int   `json:"sync_mode,omitempty"`

	// Rate control. Rate "" is flat out; the other fields need a Rate.
	Rate       string   `json:"rate,omitempty"`        // 1Mpps, 10Gbps, ifg=10us, …
	RateLayer  string   `json:"rate_layer,omitempty"`  // l2 ("") or l1
	Wait       string   `json:"wait,omitempty"`        // hybrid (""), spin, sleep
	Burst      int      `json:"burst,omitempty"`       // frames per grant (0 = automatic)
	RTPriority int      `json:"rt_priority,omitempty"` // SCHED_FIFO priority 1-99 (0 = normal scheduler)
	WakeBoost  string   `json:"wake_boost,omitempty"`  // auto (""), on, off
	FailUnder  *float64 `json:"fail_under,omitempty"`  // smallest acceptable share of the target rate, (0, 1]; nil = no check
	// Clock is the timestamp and pacing clock: auto (""), tsc, monotonic.
	Clock string `json:"clock,omitempty"`

	// How much: Count frames in total (0 = the template's counts),
	// Duration (0 = no limit).
	Count    uint64        `json:"count,omitempty"`
	Duration time.Duration `json:"duration,omitempty"`

	// Segment is this run's share of a job split over several senders,
	// "I/N": index I (0 … N-1) of N segments (wpg send --segment; ""
	// is the whole job). Each segment sends a disjoint share of every
	// stream, of the rate and of Count, so that the N together send one
	// unsegmented run's frames (ParseSegment, docs/distributed.md).
	Segment string `json:"segment,omitempty"`

	// Workers and pinning: Workers sender threads (1 to MaxWorkers),
	// Batch frames per backend call (1 to 65536; NewSpec gives 1 and
	// DefaultBatch). Cores is a CPU list in the kernel's
	// format ("2,3", "2-5"), one CPU per worker; AutoPin chooses them
	// (the interface's NUMA node first). Give at most one of the two.
	Workers int    `json:"workers,omitempty"`
	Batch   int    `json:"batch,omitempty"`
	Cores   string `json:"cores,omitempty"`
	AutoPin bool   `json:"auto_pin,omitempty"`

	// Packet templates: the frame plan (auto (""), prerender, stream) and
	// its limits (0 = Limits').
	Plan                string `json:"plan,omitempty"`
	PrerenderMaxBytes   int64  `json:"prerender_max_bytes,omitempty"`
	PrerenderMaxPackets int64  `json:"prerender_max_packets,omitempty"`

	// Frame size: payload bytes per frame on local and device paths
	// (64 B … 1 GiB, "" = 64), or the frame size of the embedded default
	// template on network paths. Units as units.ParseSize: 1KB = 1000,
	// 1KiB = 1024.
	Size string `json:"size,omitempty"`

	// Payload frames (local and device paths).
	Raw         bool    `json:"raw,omitempty"`          // no wpg header
	Fill        string  `json:"fill,omitempty"`         // pattern (""), random, file
	PayloadFile string  `json:"payload_file,omitempty"` // implies Fill file
	Seed        *uint64 `json:"seed,omitempty"`         // Fill random (nil = 1)
	Verify      string  `json:"verify,omitempty"`       // the receiver's check: on (""), sample, off

	// Limits are the site's defaults (wpg.toml [tx]).
	Limits Limits `json:"limits"`
}

// Limits are the defaults of a site (wpg.toml [tx]) for the options of the
// same names; a zero field takes the built-in default.
type Limits struct {
	RingBytes           int64 `json:"ring_bytes,omitempty"`            // 16 MiB
	PrerenderMaxBytes   int64 `json:"prerender_max_bytes,omitempty"`   // 256 MiB
	PrerenderMaxPackets int64 `json:"prerender_max_packets,omitempty"` // 100 000 000
	// The site's port addresses (wpg.toml [port]): used for a port whose
	// address neither the spec nor the template gives (Spec.SrcIP, …).
	SrcIP     string `json:"src_ip,omitempty"`
	Gateway   string `json:"gateway,omitempty"`
	RxSrcIP   string `json:"rx_src_ip,omitempty"`
	RxGateway string `json:"rx_gateway,omitempty"`
	// Rate is the site's rate (wpg.toml send.rate), in Spec.Rate's
	// syntax: used for a run whose spec gives none and whose input keeps
	// no schedule of its own (not a template whose streams have their own
	// rates, nor a capture replayed with its own timing).
	Rate string `json:"rate,omitempty"`
}

// Built-in defaults of Spec and Limits.
const (
	DefaultBatch               = 64
	DefaultRingDepth           = 4096
	DefaultRingBytes           = 16 << 20
	DefaultPrerenderMaxBytes   = 256 << 20
	DefaultPrerenderMaxPackets = 100_000_000
	// MaxWorkers is the most workers a run takes: the frame signature
	// gives the worker 8 bits.
	MaxWorkers = 256
	// MaxSlots is the most ring or staging slots (Spec.Slots) a run
	// asks for: the shared ring's limit (shmring); the backends round a
	// count up to a power of two, and some cap it lower (the report's
	// ring depth is the effective count).
	MaxSlots = 1 << 20
)

// NewSpec returns a Spec with the defaults of the fields that have no
// zero default: one worker, DefaultBatch frames per call. The zero value of
// every other field is its default.
func NewSpec() Spec { return Spec{Workers: 1, Batch: DefaultBatch} }

// BackendName resolves the Backend default: afpacket with an Interface,
// else null.
func (s *Spec) BackendName() string {
	switch {
	case s.Backend != "":
		return s.Backend
	case s.Interface != "":
		return "afpacket"
	}
	return "null"
}

// RecvSpec is everything one receiving run needs (wpg recv): the backend
// and its options, and when to stop.
type RecvSpec struct {
	// Backend names the data path ("" = afpacket, which needs Interface).
	Backend   string `json:"backend,omitempty"`
	Interface string `json:"interface,omitempty"`
	// Expect stops after this many distinct intact signed frames; with
	// Expect the run's check fails when they did not all arrive intact.
	Expect      uint64        `json:"expect,omitempty"`
	Duration    time.Duration `json:"duration,omitempty"`     // 0 = no limit
	IdleTimeout time.Duration `json:"idle_timeout,omitempty"` // after the first frame; 0 = never
	Batch       int           `json:"batch,omitempty"`        // 0 = 64
	RingBytes   int64         `json:"ring_bytes,omitempty"`   // afpacket RX ring (0 = 16 MiB)
	NoRxRing    bool          `json:"no_rx_ring,omitempty"`
	DPDKArgs    string        `json:"dpdk_args,omitempty"` // dpdk: EAL arguments (see Spec.DPDKArgs)
	// afxdp: the first receive queue (sockets on it and every one above),
	// the XDP mode (auto, native, generic) and busy polling.
	Queue    int    `json:"queue,omitempty"`
	XDPMode  string `json:"xdp_mode,omitempty"`
	BusyPoll bool   `json:"busy_poll,omitempty"`

	// Local paths.
	Listen   string `json:"listen,omitempty"` // rendezvous socket to listen on
	FIFO     string `json:"fifo,omitempty"`   // pipe: FIFO to read ("" = Env.Stdin)
	RecvMode string `json:"recv_mode,omitempty"`
	BusyWait bool   `json:"busy_wait,omitempty"`
	Slots    int    `json:"slots,omitempty"`
	PipeSize int64  `json:"pipe_size,omitempty"`
	Verify   string `json:"verify,omitempty"` // payload frames: on (""), sample, off
	// MaxFrame is the payload frame size in bytes, when the backend needs
	// it before the sender says (0 = the sender's).
	MaxFrame int64 `json:"max_frame,omitempty"`
}
