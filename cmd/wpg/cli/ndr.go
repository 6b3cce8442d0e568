package cli

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/ndr"
	"github.com/wpg-dev/wpg/pace"
	"github.com/wpg-dev/wpg/units"
)

func init() { register(newNDRCmd) }

// ndrFlags are wpg ndr's flags.
type ndrFlags struct {
	sizes      string
	trial      time.Duration
	warmup     time.Duration
	resolution string
	loss       string
	maxRate    string
	minRate    string
	rateLayer  string
	layer      pace.Layer // --rate-layer, parsed
	maxTrials  int
	iface, rx  string
	backend    string
	qdisc      bool
	jsonOut    bool

	// a device under test between two ports (docs/device.md)
	netns, rxNetns     string
	srcIP, gateway     string
	rxSrcIP, rxGateway string
	bidir              bool
	// a router of wpg's own to send through
	router      bool
	routerShape string
	// RFC 2544's latency and back-to-back tests
	latency   bool
	b2b       bool
	b2bMax    uint64
	b2bRepeat int
}

// ndrDefaultSizes is --sizes's default: RFC 2544's Ethernet frame sizes,
// FCS included (ndr.DefaultSizes).
func ndrDefaultSizes() string {
	var b strings.Builder
	for i, n := range ndr.DefaultSizes() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}

func newNDRCmd() *cobra.Command {
	f := &ndrFlags{}
	cmd := &cobra.Command{
		Use:   "ndr",
		Short: "RFC 2544 throughput: the highest rate with no loss (or at most --loss), per frame size",
		Long: `ndr searches, per frame size, for the highest rate at which a wpg receiver sees no more loss than
--loss (default 0: the non-drop rate), by a binary search of trials of --trial each between --min-rate
and --max-rate, to --resolution. Sizes are RFC 2544's Ethernet frame sizes, FCS included (wpg sends
the frame 4 bytes shorter, as every wpg size leaves the FCS out). The figure is the rate the sender
achieved in the best passing trial. Frames are UDP/IPv4 carrying wpg's signature, from 198.18.0.1 to
198.19.0.1; at 64 B, too short for UDP and the signature, IPv4 with protocol 253.

Without -i it creates a private network namespace with a veth pair, sends on the end outside with
AF_PACKET (--backend afxdp: AF_XDP, a faster sender, so that the receiving side gives out first) and
receives with wpg's AF_PACKET receiver inside, and removes the namespace at the end: the
throughput of this host's veth path with wpg on both ends. With -i and --rx-interface it sends on one
interface and receives on the other (a cable, or a device under test between them). Root is needed
(network namespaces, AF_PACKET). It takes about sizes × (8 to 12 trials) × --trial.`,
		Example: `  wpg ndr --trial 2s
  wpg ndr --sizes 64,1518 --trial 10s --resolution 0.5% --json > ndr.json
  wpg ndr -i eth1 --rx-interface eth2 --max-rate 10Gbps --loss 0.001%`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runNDR(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.sizes, "sizes", ndrDefaultSizes(), "Ethernet frame sizes to search, FCS included (RFC 2544's by default)")
	fl.DurationVar(&f.trial, "trial", 10*time.Second, "sending time of each trial")
	fl.DurationVar(&f.warmup, "warmup", time.Second, "an uncounted first trial at --min-rate per size (0: none)")
	fl.StringVar(&f.resolution, "resolution", "1%", "stop when the bracket is this share of the rate or narrower")
	fl.StringVar(&f.loss, "loss", "0", "largest acceptable loss, a ratio or a percentage (0.1%)")
	fl.StringVar(&f.maxRate, "max-rate", "10Gbps", "highest rate tried, the first trial (a bit rate counts at --rate-layer: 10Gbps is 20.83 Mpps of 64-byte frames at l2, 14.88 Mpps at l1)")
	fl.StringVar(&f.minRate, "min-rate", "", "lowest rate tried (default: a thousandth of --max-rate)")
	fl.StringVar(&f.rateLayer, "rate-layer", "l2", "bit rates (--max-rate, --min-rate and the report's) count l2 frame bytes, or l1 (+24 B per frame: FCS, preamble and inter-frame gap)")
	fl.IntVar(&f.maxTrials, "max-trials", 32, "most counted trials per size")
	fl.StringVarP(&f.iface, "interface", "i", "", "send on this interface (with --rx-interface) instead of a veth pair of wpg's own")
	fl.StringVar(&f.rx, "rx-interface", "", "receive on this interface (with -i)")
	fl.StringVar(&f.backend, "backend", "afpacket", "the sender's path: afpacket or afxdp (the receiver is wpg's AF_PACKET receiver)")
	fl.BoolVar(&f.qdisc, "qdisc-bypass", false, "afpacket: send with PACKET_QDISC_BYPASS")
	fl.BoolVar(&f.jsonOut, "json", false, "print the result as JSON")
	fl.StringVar(&f.netns, "netns", "", "the network namespace of -i (a name of ip netns, or a file)")
	fl.StringVar(&f.rxNetns, "rx-netns", "", "the network namespace of --rx-interface")
	fl.StringVar(&f.srcIP, "src-ip", "", "-i's `ADDRESS/PREFIX`: trials go from it through --gateway, whose MAC ARP or ND finds (docs/device.md)")
	fl.StringVar(&f.gateway, "gateway", "", "-i's next hop `IP` (the device under test)")
	fl.StringVar(&f.rxSrcIP, "rx-src-ip", "", "--rx-interface's `ADDRESS/PREFIX`: wpg answers ARP/ND for it")
	fl.StringVar(&f.rxGateway, "rx-gateway", "", "--rx-interface's next hop `IP` (--bidir sends from that port through it)")
	fl.BoolVar(&f.bidir, "bidir", false, "trials in both directions at once: a trial passes when both do; the rate is each direction's")
	fl.BoolVar(&f.router, "router", false, "without -i: send through a Linux router of wpg's own (a namespace forwarding between two veth links, removed at the end) instead of a plain veth pair: this host's forwarding path")
	fl.StringVar(&f.routerShape, "router-shape", "", "--router: shape its egress with tbf to this bit `RATE` (e.g. 20Mbps)")
	fl.BoolVar(&f.latency, "latency", false, "RFC 2544's latency test: after each size's search, a trial at the throughput found, its latency and jitter")
	fl.BoolVar(&f.b2b, "back-to-back", false, "RFC 2544's back-to-back test: after each size's search, the longest burst sent flat out that arrives whole")
	fl.Uint64Var(&f.b2bMax, "b2b-max", 100_000, "--back-to-back: the longest burst tried, in frames")
	fl.IntVar(&f.b2bRepeat, "b2b-repeat", 1, "--back-to-back: searches per size, the result their mean (RFC 2544 asks for 50)")
	return cmd
}

// ndrSize is one size's search in the output.
type ndrSize = ndr.SizeResult

// ndrReport is wpg ndr's JSON.
type ndrReport = ndr.Report

// parseShare reads a ratio ("0.01") or a percentage ("1%").
func parseShare(flag, s string) (float64, error) {
	t := strings.TrimSpace(s)
	scale := 1.0
	if strings.HasSuffix(t, "%") {
		t, scale = strings.TrimSuffix(t, "%"), 0.01
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 {
		return 0, usageError(fmt.Errorf("flag --%s: value %q: give a ratio such as 0.01 or a percentage such as 1%%", flag, s))
	}
	return v * scale, nil
}

func (f *ndrFlags) parse() (sizes []int, cfg ndr.Config, maxRate, minRate pace.Rate, err error) {
	if f.backend != "afpacket" && f.backend != "afxdp" {
		return nil, cfg, maxRate, minRate, usageError(fmt.Errorf("flag --backend: value %q: wpg ndr sends with afpacket or afxdp", f.backend))
	}
	if f.qdisc && f.backend != "afpacket" {
		return nil, cfg, maxRate, minRate, usageError(errors.New("flag --qdisc-bypass: it is an afpacket option; leave it out with --backend afxdp"))
	}
	list, err := parseSizeList(f.sizes, 64, 9022, func(item string, perr error) error {
		return usageError(fmt.Errorf("flag --sizes: value %q: %v (Ethernet frame sizes with the FCS, 64 to 9022)", item, perr))
	}, func(first, again string, n int64) error {
		// A size searched twice repeats its trials and its row.
		return usageError(fmt.Errorf("flag --sizes: value %q: %s and %s are the same size (%s): give each size once", f.sizes, first, again, units.FormatSize(n)))
	})
	if err != nil {
		return nil, cfg, maxRate, minRate, err
	}
	for _, n := range list {
		sizes = append(sizes, int(n))
	}
	if cfg.Resolution, err = parseShare("resolution", f.resolution); err != nil {
		return
	}
	if cfg.Resolution >= 1 || cfg.Resolution <= 0 {
		// 0 is never reached (the search read it as its default, 1 %).
		return nil, cfg, maxRate, minRate, usageError(fmt.Errorf("flag --resolution: value %q: give a share of the rate above 0 and below 100 %%, e.g. 1%% or 0.005", f.resolution))
	}
	if cfg.Loss, err = parseShare("loss", f.loss); err != nil {
		return
	}
	if cfg.Loss >= 1 {
		return nil, cfg, maxRate, minRate, usageError(fmt.Errorf("flag --loss: value %q: give a share of the frames below 100 %%, e.g. 0 (no loss) or 0.001%%", f.loss))
	}
	if f.maxTrials < 1 || f.maxTrials > 1000 {
		return nil, cfg, maxRate, minRate, usageError(fmt.Errorf("flag --max-trials: value %d: give 1 to 1000", f.maxTrials))
	}
	if f.warmup < 0 {
		return nil, cfg, maxRate, minRate, usageError(fmt.Errorf("flag --warmup: value %s: give a duration of 0 (no warm-up) or more, e.g. 1s", f.warmup))
	}
	if f.layer, err = pace.ParseLayer(f.rateLayer); err != nil {
		return nil, cfg, maxRate, minRate, usageError(fmt.Errorf("flag --rate-layer: value %q: %v", f.rateLayer, err))
	}
	if maxRate, err = pace.ParseRate(f.maxRate); err != nil || maxRate.Unlimited() || maxRate.IFG() || maxRate.LinkShare() {
		return nil, cfg, maxRate, minRate, usageError(fmt.Errorf("flag --max-rate: value %q: give a frame or bit rate, e.g. 10Gbps or 2Mpps", f.maxRate))
	}
	if f.minRate != "" {
		if minRate, err = pace.ParseRate(f.minRate); err != nil || minRate.Unlimited() || minRate.IFG() || minRate.LinkShare() {
			return nil, cfg, maxRate, minRate, usageError(fmt.Errorf("flag --min-rate: value %q: give a frame or bit rate, e.g. 10kpps", f.minRate))
		}
		// A bit rate and a frame rate compare differently at each size.
		for _, size := range sizes {
			frame := float64(size - 4)
			if lo, hi := minRate.FramesPerSecond(frame, f.layer), maxRate.FramesPerSecond(frame, f.layer); !(lo > 0) || lo > hi {
				return nil, cfg, maxRate, minRate, usageError(fmt.Errorf("flag --min-rate: value %q: at %d B it is %s, above --max-rate %q (%s): give a lower --min-rate or a higher --max-rate", f.minRate, size, formatPPS(lo), f.maxRate, formatPPS(hi)))
			}
		}
	}
	if (f.iface == "") != (f.rx == "") {
		return nil, cfg, maxRate, minRate, usageError(errors.New("flags -i and --rx-interface go together: give both (send on one, receive on the other), or neither for a veth pair of wpg's own"))
	}
	if f.iface != "" && f.iface == f.rx {
		// The receiver counts what arrives, never the host's own outgoing
		// frames: every trial would lose everything (11 trials, 29 s, and
		// "loss even at --min-rate").
		return nil, cfg, maxRate, minRate, usageError(fmt.Errorf("flags -i and --rx-interface: both name %s, and the receiver does not count the frames this host sends: receive where they arrive (the other end of the cable, the far side of the device under test), or leave out both for a veth pair of wpg's own", f.iface))
	}
	for _, fl := range []struct{ name, iface, netns string }{{"-i", f.iface, f.netns}, {"--rx-interface", f.rx, f.rxNetns}} {
		if fl.iface == "" || fl.netns != "" {
			continue // one in another namespace is looked up there, by the run
		}
		if _, ierr := net.InterfaceByName(fl.iface); ierr != nil {
			return nil, cfg, maxRate, minRate, usageError(fmt.Errorf("flag %s: interface %q does not exist in this network namespace (%s): give one of them, or leave out -i and --rx-interface for a veth pair of wpg's own", fl.name, fl.iface, interfaceList()))
		}
	}
	if f.iface == "" {
		for _, x := range []struct{ name, v string }{{"--netns", f.netns}, {"--rx-netns", f.rxNetns}, {"--src-ip", f.srcIP}, {"--gateway", f.gateway}, {"--rx-src-ip", f.rxSrcIP}, {"--rx-gateway", f.rxGateway}} {
			if x.v != "" {
				return nil, cfg, maxRate, minRate, usageError(fmt.Errorf("flag %s: it is for a device between two ports: give -i and --rx-interface too (a veth pair of wpg's own has no device to route through)", x.name))
			}
		}
		if f.bidir && !f.router {
			return nil, cfg, maxRate, minRate, usageError(errors.New("flag --bidir: it is for a device between two ports: give -i and --rx-interface too, or --router"))
		}
	}
	if f.router && f.iface != "" {
		return nil, cfg, maxRate, minRate, usageError(errors.New("flag --router: it builds the path to send through: leave out -i and --rx-interface (or leave out --router to test the device between them)"))
	}
	if f.routerShape != "" {
		r, err := pace.ParseRate(f.routerShape)
		if err != nil || !r.Bits() || r.LinkShare() || !f.router {
			return nil, cfg, maxRate, minRate, usageError(fmt.Errorf("flag --router-shape: value %q: give a bit rate such as 20Mbps, with --router", f.routerShape))
		}
	}
	if f.b2bMax == 0 || f.b2bMax > 100_000_000 {
		return nil, cfg, maxRate, minRate, usageError(fmt.Errorf("flag --b2b-max: value %d: give 1 to 100000000 frames", f.b2bMax))
	}
	if f.b2bRepeat < 1 || f.b2bRepeat > 1000 {
		return nil, cfg, maxRate, minRate, usageError(fmt.Errorf("flag --b2b-repeat: value %d: give 1 to 1000", f.b2bRepeat))
	}
	cfg.Trial, cfg.Warmup, cfg.MaxTrials = f.trial, f.warmup, f.maxTrials
	if f.trial <= 0 {
		return nil, cfg, maxRate, minRate, usageError(fmt.Errorf("flag --trial: value %s: give a positive duration, e.g. 10s", f.trial))
	}
	return sizes, cfg, maxRate, minRate, nil
}

func runNDR(cmd *cobra.Command, f *ndrFlags) error {
	sizes, cfg, maxRate, minRate, err := f.parse()
	if err != nil {
		return err
	}
	for _, name := range []string{"b2b-max", "b2b-repeat"} {
		if !f.b2b && changed(cmd, name) != nil {
			return usageError(fmt.Errorf("flag --%s: tunes the back-to-back test, and it is not asked for: add --back-to-back, or drop --%s", name, name))
		}
	}
	out := cmd.OutOrStdout()
	setup := ndr.Setup{Sizes: sizes, MaxRate: maxRate, MinRate: minRate, Layer: f.layer, Search: cfg,
		Backend: f.backend, QdiscBypass: f.qdisc, Interface: f.iface, RxInterface: f.rx,
		Netns: f.netns, RxNetns: f.rxNetns, SrcIP: f.srcIP, Gateway: f.gateway, RxSrcIP: f.rxSrcIP, RxGateway: f.rxGateway,
		Bidir: f.bidir, Latency: f.latency, Router: f.router}
	if f.routerShape != "" {
		r, _ := pace.ParseRate(f.routerShape) // checked by parse
		setup.RouterShape = r.FramesPerSecond(1, pace.L2) * 8
	}
	if f.b2b {
		setup.BackToBack = &ndr.BurstConfig{MaxBurst: f.b2bMax, Repeat: f.b2bRepeat}
	}
	if !f.jsonOut {
		setup.Started = func(rep ndr.Report) {
			where := fmt.Sprintf("%s → %s", rep.Sender, rep.Receiver)
			switch {
			case f.router:
				where = fmt.Sprintf("%s → router → %s (namespace %s)", rep.Sender, rep.Receiver, rep.Namespace)
			case rep.Namespace != "":
				where = fmt.Sprintf("veth %s → %s (namespace %s)", rep.Sender, rep.Receiver, rep.Namespace)
			}
			fmt.Fprintf(out, "wpg ndr: %s, %s; trials of %s, loss ≤ %s, resolution %s\n", f.backend, where, cfg.Trial, formatShare(cfg.Loss), formatShare(rep.Resolution))
		}
		setup.OnTrial = func(size int, t ndr.Trial) {
			verdict := "pass"
			if !t.Pass {
				verdict = "loss"
			}
			if t.Warmup {
				verdict += "  (warm-up at --min-rate, not counted)"
			}
			fmt.Fprintf(out, "  %5d B  asked %s  sent %s  received %d of %d  loss %s  %s\n", size, formatPPS(t.Rate), formatPPS(t.AchievedPPS), t.Received, t.Sent, formatShare(t.LossRatio), verdict)
		}
	}
	if f.iface == "" {
		markStarted(cmd) // the flags are valid: a namespace that cannot be made is the run's failure
	}
	rep, err := ndr.Run(cmd.Context(), setup)
	if ps := job.AsProblems(err); len(ps) > 0 {
		// A port option the run refused: told with the flags' names.
		err = &ExitError{Code: ExitUsage, Err: &flagMessage{msg: "ndr: " + formatProblem(cmd, nil, ps[0]), err: err}}
	}
	if rep == nil {
		var nse *ndr.NamespaceError
		switch {
		case errors.As(err, &nse) && nse.Stale:
			return fmt.Errorf("ndr: removing namespaces a killed wpg left: %w", nse.Err)
		case errors.As(err, &nse):
			return fmt.Errorf("ndr: %w (wpg ndr needs root for its namespace and AF_PACKET; or give -i and --rx-interface)", nse.Err)
		}
		return err
	}
	if err != nil && !rep.Interrupted && !f.jsonOut && !measuredAny(*rep) {
		// Stopped before its first counted trial (a port option the run
		// refused, a gateway that did not answer): its table would be
		// empty, the error is all there is to tell.
		return err
	}
	if f.jsonOut {
		if err := writeJSON(out, rep); err != nil {
			return err
		}
	} else {
		printNDR(out, *rep)
	}
	if rep.Interrupted {
		// Ctrl-C is how a search is cut short, not a failure: the table of
		// what was found is printed, as send's report is.
		return nil
	}
	return err
}

// measuredAny says whether rep holds a counted trial of some size.
func measuredAny(rep ndrReport) bool {
	for _, s := range rep.Sizes {
		for _, t := range s.Trials {
			if !t.Warmup {
				return true
			}
		}
	}
	return false
}

func formatShare(v float64) string {
	return strconv.FormatFloat(v*100, 'g', 4, 64) + " %"
}

func formatPPS(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.3f Mpps", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1f kpps", v/1e3)
	}
	return fmt.Sprintf("%.0f pps", v)
}

func printNDR(w io.Writer, rep ndrReport) {
	fmt.Fprintf(w, "\n%-8s %-14s %-16s %-8s %s\n", "size", "throughput", strings.ToUpper(cmp.Or(rep.BPSLayer, "l2"))+" bit rate", "trials", "note")
	for i, s := range rep.Sizes {
		note := ""
		switch {
		case s.SenderLimited:
			note = "no loss, but the sender fell short of the rate asked: its own limit or the path's backpressure (a shaper, a full queue); the NDR is at least this"
		case s.Limited:
			note = "passed at --max-rate: the path may go faster"
		case rep.Error != "" && i == len(rep.Sizes)-1:
			note = "stopped by an error (below): the figure is what passed before it"
		case rep.Interrupted && i == len(rep.Sizes)-1:
			note = "interrupted (a stop signal): the figure is what passed before it"
		case s.ThroughputPPS == 0:
			note = "loss even at --min-rate"
		case !s.Converged:
			note = "trial budget ran out before the resolution"
		}
		counted := 0
		for _, t := range s.Trials {
			if !t.Warmup {
				counted++
			}
		}
		fmt.Fprintf(w, "%-8s %-14s %-16s %-8d %s\n", strconv.Itoa(s.Size)+" B", formatPPS(s.ThroughputPPS), fmt.Sprintf("%.3f Gbit/s", s.BPS/1e9), counted, note)
	}
	printRFC2544(w, rep)
	if rep.Interrupted {
		fmt.Fprintf(w, "(interrupted after %s)\n", rep.Elapsed.Round(time.Second))
		return
	}
	fmt.Fprintf(w, "(%s in all)\n", rep.Elapsed.Round(time.Second))
}

// printRFC2544 writes the latency and back-to-back tables, for the sizes
// that ran them.
func printRFC2544(w io.Writer, rep ndrReport) {
	header := false
	for _, s := range rep.Sizes {
		l := s.Latency
		if l == nil {
			continue
		}
		if !header {
			fmt.Fprintf(w, "\nlatency at the throughput (RFC 2544 26.2)\n%-8s %-14s %-12s %-12s %-12s %-12s %s\n", "size", "rate", "min", "p50", "p99", "max", "jitter")
			header = true
		}
		if l.Latency == nil {
			fmt.Fprintf(w, "%-8s %-14s nothing arrived (%d sent)\n", strconv.Itoa(s.Size)+" B", formatPPS(l.AchievedPPS), l.Sent)
			continue
		}
		fmt.Fprintf(w, "%-8s %-14s %-12s %-12s %-12s %-12s %s\n", strconv.Itoa(s.Size)+" B", formatPPS(l.AchievedPPS),
			time.Duration(l.Latency.MinNs), time.Duration(l.Latency.P50Ns), time.Duration(l.Latency.P99Ns), time.Duration(l.Latency.MaxNs), time.Duration(l.JitterNs))
	}
	header = false
	for _, s := range rep.Sizes {
		b := s.BackToBack
		if b == nil {
			continue
		}
		if !header {
			fmt.Fprintf(w, "\nback-to-back frames (RFC 2544 26.4)\n%-8s %-14s %-8s %s\n", "size", "burst", "trials", "note")
			header = true
		}
		note := ""
		switch {
		case b.Limited:
			note = "passed at --b2b-max: the device takes longer bursts"
		case b.BurstFrames == 0:
			note = "even one frame sent flat out was lost"
		case len(b.Bursts) > 1:
			note = fmt.Sprintf("mean of %d searches: %v", len(b.Bursts), b.Bursts)
		}
		fmt.Fprintf(w, "%-8s %-14s %-8d %s\n", strconv.Itoa(s.Size)+" B", strconv.FormatFloat(b.BurstFrames, 'f', -1, 64)+" frames", len(b.Trials), note)
	}
	if header {
		fmt.Fprintln(w)
	}
}

// interfaceList names this namespace's interfaces, for an error.
func interfaceList() string {
	ifs, err := net.Interfaces()
	if err != nil {
		return "cannot list them: " + err.Error()
	}
	names := make([]string, len(ifs))
	for i, f := range ifs {
		names[i] = f.Name
	}
	return "existing: " + strings.Join(names, ", ")
}
