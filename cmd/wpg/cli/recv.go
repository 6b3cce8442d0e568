package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/spf13/cobra"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/hdrlog"
	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/metrics"
	"github.com/wpg-dev/wpg/pace"
	"github.com/wpg-dev/wpg/recv"
	"github.com/wpg-dev/wpg/report"
	"github.com/wpg-dev/wpg/units"
)

func init() { register(newRecvCmd) }

// recvFlags are the flags of `wpg recv`. The network ones come first; the
// local-path ones map onto backend.Options the same way send's do.
type recvFlags struct {
	backend     string
	iface       string
	expect      uint64
	duration    time.Duration
	idleTimeout time.Duration
	json        bool
	batch       int
	ringBytes   string
	noRxRing    bool
	dpdkArgs    string
	queue       int
	xdpMode     string
	busyPoll    bool

	listen   string
	fifo     string
	recvMode string
	busyWait bool
	slots    int
	pipeSize string
	verify   string
	size     string

	interval   time.Duration
	jsonStream bool
	hdrOut     string
	rateLayer  string
	metrics    metricsFlags
}

// exitVerifyFailed is the exit code of a run with --expect whose frames
// did not all arrive intact.
const exitVerifyFailed = 3

func newRecvCmd() *cobra.Command {
	var f recvFlags
	cmd := &cobra.Command{
		Use:   "recv",
		Short: "receive and verify frames: per-stream loss, duplicates, reordering, corruption, one-way latency",
		Long: `recv is the receiving side of a backend. On a network interface (-i IFACE, backend afpacket) it
captures every frame arriving there (not the host's own outgoing ones), and counts per stream the frames
carrying the wpg signature: received, lost (sequence gaps), duplicated, reordered, corrupted (the IPv4
header, UDP, TCP or ICMP checksum is wrong), and the one-way latency when the sender runs on the same
host (both sides use CLOCK_MONOTONIC). Frames without a signature are counted separately. For local
paths (--backend pipe|shm|cma|unix) it verifies payload frames (--verify on|sample|off).

It stops after --expect N frames, after --duration, when nothing arrived for --idle-timeout after the
first frame, when the sender goes away (local paths), or on Ctrl-C, and prints the report (--json for
the documented JSON). With --expect, the exit code is 3 when frames were lost, duplicated, corrupted or
missing.`,
		Example: "  wpg recv -i veth1 --expect 200000 --idle-timeout 2s\n  wpg recv --backend shm --listen /tmp/wpg.sock --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRecv(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.backend, "backend", "", "data path to receive from (default: afpacket with -i)")
	fl.StringVarP(&f.iface, "interface", "i", "", "network interface to capture on (afpacket, afxdp)")
	fl.Uint64Var(&f.expect, "expect", 0, "stop after this many distinct intact signed frames (corrupted frames and duplicates do not count)")
	fl.DurationVar(&f.duration, "duration", 0, "stop this long after the start, the wait for a sender included (0: no limit)")
	fl.DurationVar(&f.idleTimeout, "idle-timeout", 0, "stop when nothing arrived for this long after the first frame (0: never)")
	fl.BoolVar(&f.json, "json", false, "print the report as JSON")
	fl.IntVar(&f.batch, "batch", 64, "frames taken from the backend per call")
	fl.StringVar(&f.ringBytes, "ring-bytes", "16MiB", "afpacket: RX ring size; afxdp: UMEM per queue, every chunk on the fill ring (what covers the receiver's time off its CPU)")
	fl.StringVar(&f.dpdkArgs, "dpdk-args", "", "dpdk: EAL arguments, e.g. \"--no-huge -m 512 --no-pci --vdev net_af_packet0,iface=veth1\" (config dpdk.eal_args; builds with -tags dpdk)")
	fl.IntVar(&f.queue, "queue", 0, "afxdp: first receive queue (a socket on it and on every queue above)")
	fl.StringVar(&f.xdpMode, "xdp-mode", "auto", "afxdp: auto, native (zero-copy, driver-mode XDP), generic (copy, SKB-mode XDP)")
	fl.BoolVar(&f.busyPoll, "busy-poll", false, "afxdp: busy polling (SO_PREFER_BUSY_POLL, SO_BUSY_POLL, SO_BUSY_POLL_BUDGET)")
	fl.BoolVar(&f.noRxRing, "no-rx-ring", false, "afpacket: recvmmsg instead of the TPACKET_V3 RX ring (also the automatic fallback when the ring cannot be set up)")
	fl.StringVar(&f.listen, "listen", "", "local paths: rendezvous socket to listen on for the sender")
	fl.StringVar(&f.fifo, "fifo", "", "pipe: FIFO to read (default: standard input)")
	fl.StringVar(&f.recvMode, "recv-mode", "", "shm: inplace (default) or copy; cma: readv (default) or writev (the sender's choice wins)")
	fl.StringVar(&f.pipeSize, "pipe-size", "", "pipe: capacity to ask for, e.g. 64KiB (default /proc/sys/fs/pipe-max-size)")
	fl.BoolVar(&f.busyWait, "busy-wait", false, "shm: poll instead of sleeping when idle")
	fl.IntVar(&f.slots, "slots", 0, "shm, udmabuf: ring slots; cma, xpmem: staging slots (0: the sender's)")
	fl.StringVar(&f.verify, "verify", "on", "payload frames: on, sample, off")
	fl.StringVar(&f.size, "size", "", "payload frame size, when the backend needs it before the sender says")
	fl.DurationVar(&f.interval, "interval", 0, "print a line per period (rate, frames, loss, latency p99 where measured) and add intervals[] to the JSON, e.g. 200ms or 1s (at least 50ms; 0: none; 1s with --json-stream)")
	fl.BoolVar(&f.jsonStream, "json-stream", false, "print JSON as the reception goes, one object a line (iperf3's --json-stream): a start event, an interval event per --interval (default 1s), and the end event with the report")
	fl.StringVar(&f.hdrOut, "hdr-out", "", "write the one-way latency histogram to this `FILE` as an HdrHistogram log: one histogram per --interval, or one for the run")
	fl.StringVar(&f.rateLayer, "rate-layer", "l2", "the report's bit rates count l2 frame bytes, or l1 (+24 B per frame: FCS, preamble and inter-frame gap)")
	addMetricsFlags(fl, &f.metrics, "the job this receiver verifies, `NAME`: the job label of its --metrics-listen series and the report's job; the senders' --job NAME, or their job identity (the job of a sender's report: wpg-0123456789abcdef)")
	return cmd
}

func runRecv(cmd *cobra.Command, f *recvFlags) error {
	spec := job.RecvSpec{
		Backend: f.backend, Interface: f.iface, Expect: f.expect, Duration: f.duration, IdleTimeout: f.idleTimeout,
		NoRxRing: f.noRxRing, Listen: f.listen, FIFO: f.fifo, RecvMode: f.recvMode,
		BusyWait: f.busyWait, Slots: f.slots, Queue: f.queue, BusyPoll: f.busyPoll,
	}
	if changed(cmd, "xdp-mode") != nil {
		spec.XDPMode = f.xdpMode
	}
	cfg, err := loadConfig(cmd)
	if err != nil {
		return err
	}
	o := recvDefaults(cfg, &spec, func(name string) bool { return changed(cmd, name) != nil })
	spec.DPDKArgs = dpdkArgs(changed(cmd, "dpdk-args") != nil, f.dpdkArgs, spec.Backend, cfg)
	if changed(cmd, "ring-bytes") != nil {
		n, err := units.ParseSize(f.ringBytes)
		if err != nil {
			return fmt.Errorf("recv: --ring-bytes: %w", err)
		}
		spec.RingBytes = n
	}
	if changed(cmd, "verify") != nil {
		spec.Verify = f.verify
	}
	if changed(cmd, "batch") != nil {
		spec.Batch = f.batch // else 64, or what a sender's request asks (--listen)
	}
	n, err := parsePipeSize(f.pipeSize)
	if err != nil {
		return fmt.Errorf("recv: %w", err)
	}
	spec.PipeSize = int64(n)
	if f.size != "" {
		n, err := units.ParseSize(f.size)
		if err != nil {
			return fmt.Errorf("recv: --size: %w", err)
		}
		spec.MaxFrame = n
	}

	layer, err := pace.ParseLayer(f.rateLayer)
	if err != nil {
		return usageError(fmt.Errorf("flag --rate-layer: value %q: %v", f.rateLayer, err))
	}
	if err := f.metrics.checkJob(false); err != nil {
		return usageError(err)
	}
	if err := f.metrics.checkLinger(cmd); err != nil {
		return usageError(err)
	}
	if err := f.metrics.checkListen(); err != nil {
		return usageError(err)
	}
	if f.interval < 0 || (f.interval > 0 && f.interval < recv.MinProgressEvery) {
		return fmt.Errorf("recv: --interval %v: give %v or more, e.g. 200ms or 1s (0: none)", f.interval, recv.MinProgressEvery)
	}
	if f.jsonStream && f.interval == 0 {
		f.interval = defaultStreamInterval
	}
	asJSON := f.json || f.jsonStream
	prov := provenance()
	// --metrics-listen: the receiver's counters from before it waits for
	// its first frame.
	var mr *metrics.Receiver
	stopMetrics := func() {}
	if f.metrics.listen != "" {
		name := spec.Interface
		if name == "" {
			name = spec.Listen
		}
		be := spec.Backend
		if be == "" {
			be = "afpacket"
		}
		mr = metrics.NewReceiver(f.metrics.job, name, be)
		stop, err := serveMetrics(cmd, &f.metrics, mr, "", asJSON)
		if err != nil {
			return err
		}
		stopMetrics = stop
	}
	rcv, err := job.Receive(cmd.Context(), spec, cliEnv(cmd))
	if err != nil {
		if mr != nil {
			f.metrics.linger = 0 // nothing ran: nothing to see
			stopMetrics()
		}
		return startError(cmd, "recv: ", o, err)
	}
	defer stopMetrics()
	markStarted(cmd) // the input is valid: what fails from here on is the run
	stderr := cmd.ErrOrStderr()
	if !rcv.Sender() {
		where := spec.Listen
		if where == "" {
			where = "FIFO " + spec.FIFO
		}
		fmt.Fprintf(stderr, "wpg recv: no sender came to %s within --duration %v\n", where, spec.Duration)
	}
	if info := rcv.Info(); rcv.Kind() == backend.KindNetwork {
		// A line that scripts and tests wait for before starting the sender.
		mode := info.Mode
		if info.Reason != "" && info.Reason != "--no-rx-ring" {
			mode += ": " + info.Reason
		}
		fmt.Fprintf(stderr, "wpg recv: receiving on %s (%s, %s)\n", info.Interface, info.Backend, mode)
	}
	out := cmd.OutOrStdout()
	if f.jsonStream {
		if err := report.WriteEvent(out, report.Event{Event: "start", Data: report.StreamStart{Schema: recv.Schema, Command: "recv",
			IntervalSeconds: f.interval.Seconds(), Provenance: &prov}}); err != nil {
			return err
		}
	}
	show := func(in report.Interval) {
		switch {
		case f.jsonStream:
			_ = report.WriteEvent(out, report.Event{Event: "interval", Data: in}) // a reader gone: the report's write says so
		case !f.json:
			report.WriteIntervalLine(out, in)
		}
	}
	var windows []hdrWindow // --hdr-out: each interval's latency
	var progress func(recv.Progress)
	terminal := report.IsTerminal(stderr) && f.interval == 0
	if terminal {
		progress = func(p recv.Progress) {
			fmt.Fprintf(stderr, "\r%8.1fs  %d frames  %d corrupted  %d without signature ", p.Elapsed.Seconds(), p.Frames, p.Corrupted, p.Unsigned)
		}
	}
	iv := report.Intervals{Layer: layer}
	if f.interval > 0 {
		// The loop reports once per interval, on its schedule: each report
		// closes one, with the latency of its frames.
		progress = func(p recv.Progress) {
			lost, corrupted := int64(p.Lost), p.Corrupted
			in, ok := iv.Add(report.Sample{Elapsed: p.Elapsed, Frames: p.Frames, Bytes: p.Bytes, Lost: &lost, Corrupted: &corrupted,
				LatencyP99Ns: p.Latency.P99Ns, JitterNs: p.JitterNs})
			if !ok {
				return
			}
			show(in)
			h, _ := p.MarshalLatency() // nil: no latency in the window
			windows = append(windows, hdrWindow{in.Start, in.End, h})
		}
	}
	if mr != nil {
		then := progress
		progress = func(p recv.Progress) {
			mr.Update(p)
			if then != nil {
				then(p)
			}
		}
	}
	waitStart := time.Now()
	res, err := rcv.Wait(progress, f.interval)
	res.CountAt(layer)
	if mr != nil {
		mr.Finish(res)
	}
	if terminal {
		fmt.Fprintln(stderr)
	}
	var peer struct {
		Hist json.RawMessage `json:"latency_histogram"`
	}
	b, merr := res.MarshalPeer()
	if merr == nil {
		merr = json.Unmarshal(b, &peer)
	}
	var intervals []report.Interval
	if f.interval > 0 {
		n := len(iv.List())
		lost, corrupted := int64(res.Lost), res.Corrupted
		intervals = iv.Finish(report.Sample{Elapsed: time.Since(waitStart), Frames: res.Frames, Bytes: res.Bytes, Lost: &lost, Corrupted: &corrupted, JitterNs: res.JitterNs})
		if merr == nil {
			endLatency(intervals, n, slices.Clone(windows), peer.Hist, res.Seconds)
		}
		for _, in := range intervals[min(n, len(intervals)):] {
			show(in)
		}
	}
	if f.hdrOut != "" {
		if merr == nil {
			if windows, merr = latencyWindows(windows, intervals, peer.Hist, res.Seconds); merr == nil {
				merr = writeHdr(f.hdrOut, windows, waitStart, "latency", "wpg recv: one-way latency (ns)",
					"no frame carried a usable transmit timestamp (the sender must run on this host)")
			}
		}
		if merr != nil && err == nil {
			err = merr
		}
	}
	if asJSON {
		doc := struct {
			recv.Result
			// The job of --job.
			Job string `json:"job,omitempty"`
			// The histogram behind latency, for an exact wpg report
			// merge of several receivers.
			LatencyHistogram json.RawMessage    `json:"latency_histogram,omitempty"`
			Provenance       *report.Provenance `json:"provenance,omitempty"`
			Intervals        []report.Interval  `json:"intervals,omitempty"`
		}{res, f.metrics.job, peer.Hist, &prov, intervals}
		var jerr error
		if f.jsonStream {
			jerr = report.WriteEvent(out, report.Event{Event: "end", Data: doc})
		} else {
			jerr = writeJSON(out, doc)
		}
		if jerr != nil && err == nil {
			err = jerr
		}
	} else {
		res.WriteTable(out)
	}
	var failed *report.CheckFailure
	if errors.As(err, &failed) {
		return &ExitError{Code: exitVerifyFailed, Err: fmt.Errorf("recv: %w", failed)}
	}
	return err
}

// endLatency gives the intervals that the end of the run closed (from the
// nth), or added its frames to (the last, when it closed none), their
// one-way latency p99: that of the whole latency histogram, total, less
// the windows of the intervals the progress closed before (latencyWindows).
// No progress measured it, so the last interval went without one.
func endLatency(intervals []report.Interval, n int, windows []hdrWindow, total []byte, seconds float64) {
	ws, err := latencyWindows(windows, intervals, total, seconds)
	if err != nil || len(ws) != len(intervals) {
		return
	}
	from := n
	if len(intervals) == n {
		from = n - 1
	}
	for i := max(from, 0); i < len(intervals); i++ {
		if len(ws[i].Hist) == 0 {
			continue
		}
		if h, err := hdrlog.Decode(ws[i].Hist); err == nil && h.TotalCount() > 0 {
			intervals[i].LatencyP99Ns = h.ValueAtQuantile(99)
		}
	}
}

// latencyWindows completes a receiver's --hdr-out histograms: the window
// of each interval its progress closed, and what the end added (the
// whole latency histogram, total, less them): a window of its own when
// the end closed intervals, else part of the last; without intervals
// (none asked for) one window, the whole run's.
func latencyWindows(windows []hdrWindow, intervals []report.Interval, total []byte, seconds float64) ([]hdrWindow, error) {
	if len(intervals) == 0 {
		return []hdrWindow{{0, seconds, total}}, nil
	}
	if len(total) == 0 || string(total) == "null" {
		for _, in := range intervals[len(windows):] {
			windows = append(windows, hdrWindow{in.Start, in.End, nil})
		}
		return windows, nil
	}
	all, err := hdrlog.Decode(total)
	if err != nil {
		return nil, err
	}
	seen := hdrhistogram.New(all.LowestTrackableValue(), all.HighestTrackableValue(), int(all.SignificantFigures()))
	for _, w := range windows {
		if len(w.Hist) > 0 {
			h, err := hdrlog.Decode(w.Hist)
			if err != nil {
				return nil, err
			}
			seen.Merge(h)
		}
	}
	tail := hdrlog.Sub(all, seen)
	if n := len(windows); n == len(intervals) && n > 0 {
		// The end went into the last interval: so does its latency.
		if len(windows[n-1].Hist) > 0 {
			last, err := hdrlog.Decode(windows[n-1].Hist)
			if err != nil {
				return nil, err
			}
			tail.Merge(last)
		}
		windows = windows[:n-1]
	}
	b, err := hdrlog.Encode(tail)
	if err != nil {
		return nil, err
	}
	for i, in := range intervals[len(windows):] {
		w := hdrWindow{in.Start, in.End, nil}
		if i == 0 {
			w.Hist = b
		}
		windows = append(windows, w)
	}
	return windows, nil
}
