package ndr

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/wpg-dev/wpg/internal/netns"
	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/pace"
	"github.com/wpg-dev/wpg/recv"
)

// Schema names the format of Report.
const Schema = "wpg.ndr/1"

// DefaultSizes lists RFC 2544's Ethernet frame sizes, FCS included (a
// new slice each call).
func DefaultSizes() []int { return []int{64, 128, 256, 512, 1024, 1280, 1518} }

// Setup is an RFC 2544 throughput test, what Run does: per frame size, a
// Search whose trials a Harness runs.
type Setup struct {
	// Sizes are the Ethernet frame sizes to search, FCS included, 64 to
	// 9022, each once (empty: DefaultSizes). wpg sends each 4 bytes
	// shorter, as every wpg size leaves the FCS out.
	Sizes []int
	// MaxRate is the highest rate tried, the first trial of each size: a
	// frame or a bit rate (a bit rate counts at Layer: at L2, wpg's
	// convention, the frames' bytes without the FCS, 10Gbps being 20.83
	// Mpps at 64 B; at L1 the wire's framing too, 14.88 Mpps).
	MaxRate pace.Rate
	// Layer is where bit rates count: MaxRate, MinRate and the report's
	// bit rates (SizeResult.BPS); the zero value is L2, as every wpg
	// report counts them (docs/rate.md).
	Layer pace.Layer
	// MinRate is the lowest rate tried, at most MaxRate at every size;
	// the zero Rate (unlimited) means a thousandth of MaxRate.
	MinRate pace.Rate
	// Search bounds each size's search (Resolution, Loss, Trial, Warmup,
	// MaxTrials); its MaxRate and MinRate are set per size from the two
	// above.
	Search Config
	// Backend, QdiscBypass: the sender's path, as Harness.
	Backend     string
	QdiscBypass bool
	// Interface and RxInterface are where the frames leave and arrive (a
	// cable, or a device under test between them); both empty: Run
	// creates a private network namespace with a veth pair, sends on the
	// end outside and receives inside, and removes it on return. Either
	// way it needs root.
	Interface, RxInterface string
	// Netns and RxNetns, SrcIP, Gateway, RxSrcIP, RxGateway and Bidir
	// are the ports' namespaces, addresses and next hops, and both
	// directions at once, as the Harness fields of those names (a device
	// under test between two ports, docs/device.md).
	Netns, RxNetns                     string
	SrcIP, Gateway, RxSrcIP, RxGateway string
	Bidir                              bool
	// Router, with neither interface given, puts a Linux router between
	// the sender and the receiver: the test bed's (a namespace that
	// forwards between two veth links, the ports in a namespace of their
	// own, internal/netns), sent through with its addresses and gateways,
	// so that the figure is this host's forwarding path. RouterShape,
	// when above 0, shapes its egress ends with tbf to that many bits/s.
	Router      bool
	RouterShape float64
	// Latency runs RFC 2544's latency test after each size's search: one
	// more trial of Search.Trial at the throughput found, its one-way
	// latency and jitter in SizeResult.Latency.
	Latency bool
	// BackToBack, when not nil, runs RFC 2544's back-to-back test after
	// each size's search (and latency test): the longest burst sent flat
	// out that arrives whole (SizeResult.BackToBack).
	BackToBack *BurstConfig
	// Started, when not nil, is called once the path is ready, with the
	// report's header (interfaces, namespace, trial, loss, resolution).
	Started func(Report)
	// OnTrial, when not nil, is called as each trial ends, with the
	// size it was of (FCS included).
	OnTrial func(size int, t Trial)
}

// SizeResult is one size's search.
type SizeResult struct {
	// Size is the Ethernet frame size with the FCS; Frame what wpg sends.
	Size       int     `json:"size"`
	Frame      int     `json:"frame_bytes"`
	MaxRatePPS float64 `json:"max_rate_pps"`
	// BPS is the throughput's bit rate at the report's Layer (BPSLayer):
	// at l2 the frames' bytes, FCS left out, as wpg sends them; at l1
	// with the wire's 24 more (preamble, SFD, FCS, gap) too.
	BPS float64 `json:"throughput_bps"`
	// ThroughputBPS is the throughput's bit rate at layer 1, whatever the
	// Layer: (size + 20) × 8 bits a frame, the size with its FCS.
	ThroughputBPS float64 `json:"throughput_bps_l1"`
	Result
	// Latency is the latency test's trial (Setup.Latency), nil without
	// one or when nothing passed.
	Latency *LatencyTest `json:"latency,omitempty"`
	// BackToBack is the back-to-back test (Setup.BackToBack).
	BackToBack *BurstResult `json:"back_to_back,omitempty"`
}

// LatencyTest is RFC 2544's latency test at one frame size (section
// 26.2): a trial at the throughput the search found, and the one-way
// latency and interarrival jitter of its frames.
type LatencyTest struct {
	// Rate is the rate asked for (frames/s): the best passing trial's.
	Rate float64 `json:"rate_pps"`
	Outcome
	// Latency is the receiver's summary (min, mean, p50, p99, p99.9,
	// max); nil when no frame arrived.
	Latency *recv.Latency `json:"latency,omitempty"`
}

// Report is a finished Run: wpg ndr's JSON (schema wpg.ndr/1).
type Report struct {
	Schema     string  `json:"schema"`
	Backend    string  `json:"backend"`
	Sender     string  `json:"sender_interface"`
	Receiver   string  `json:"receiver_interface"`
	Namespace  string  `json:"namespace,omitempty"`
	Trial      float64 `json:"trial_seconds"`
	Loss       float64 `json:"loss_ratio"`
	Resolution float64 `json:"resolution"`
	// BPSLayer is where the bit rates count: "l2" (wpg's convention)
	// or "l1" (Setup.Layer).
	BPSLayer string       `json:"bps_layer"`
	Sizes    []SizeResult `json:"sizes"`
	Error    string       `json:"error,omitempty"`
	// Interrupted: a stop signal (Ctrl-C, SIGTERM) ended the search; the
	// last size's figure is what passed before it, and sizes after it
	// are missing.
	Interrupted bool          `json:"interrupted,omitempty"`
	Elapsed     time.Duration `json:"-"`
}

// NamespaceError is a Run that could not set up its own veth pair: the
// namespace could not be created (it needs root), or those a killed wpg
// left could not be removed (Stale).
type NamespaceError struct {
	Stale bool
	Err   error
}

// Error says which, and how to do without the namespace.
func (e *NamespaceError) Error() string {
	if e.Stale {
		return "ndr: removing namespaces a killed wpg left: " + e.Err.Error()
	}
	return "ndr: " + e.Err.Error() + " (a network namespace of its own needs root; or give Interface and RxInterface)"
}

// Unwrap returns the namespace's error.
func (e *NamespaceError) Unwrap() error { return e.Err }

// Run runs the test: per size, a search from MaxRate down, each trial
// sending at a rate for Search.Trial and counting what arrives, until
// the bracket is within the resolution. A setup it cannot run (bad
// fields, a namespace it cannot create: a *NamespaceError) returns a nil
// report. Otherwise the report holds every size searched; on a trial's
// error the search stops there (Report.Error says it) and Run returns the
// error, and when ctx ends it stops the same way with Report.Interrupted
// set and ctx.Err().
func Run(ctx context.Context, s Setup) (*Report, error) {
	s, err := s.withDefaults()
	if err != nil {
		return nil, err
	}
	rep := &Report{Schema: Schema, Backend: s.Backend, Sender: s.Interface, Receiver: s.RxInterface,
		Trial: s.Search.Trial.Seconds(), Loss: s.Search.Loss, Resolution: s.Search.Resolution, BPSLayer: s.Layer.String()}
	if rep.Resolution == 0 {
		rep.Resolution = 0.01
	}
	h := Harness{Backend: s.Backend, QdiscBypass: s.QdiscBypass, Sender: s.Interface, Receiver: s.RxInterface,
		SenderNetns: s.Netns, ReceiverNetns: s.RxNetns, SrcIP: s.SrcIP, Gateway: s.Gateway, RxSrcIP: s.RxSrcIP, RxGateway: s.RxGateway, Bidir: s.Bidir}
	if s.Router {
		if _, err := netns.CleanStale(ctx); err != nil {
			return nil, &NamespaceError{Stale: true, Err: err}
		}
		o := netns.RouterOptions{}
		if s.RouterShape > 0 {
			o.Shape = &netns.Shaper{Rate: int64(s.RouterShape)}
		}
		r, err := netns.NewRouter(ctx, o)
		if err != nil {
			return nil, &NamespaceError{Err: err}
		}
		defer r.Close()
		h.Sender, h.Receiver, h.SenderNetns, h.ReceiverNetns = r.A.Port, r.B.Port, r.PortsPath(), r.PortsPath()
		h.SrcIP, h.Gateway = r.A.Addr4.String(), r.A.Gateway4.String()
		h.RxSrcIP, h.RxGateway = r.B.Addr4.String(), r.B.Gateway4.String()
		rep.Sender, rep.Receiver, rep.Namespace = r.A.Port, r.B.Port, r.Name
	} else if s.Interface == "" {
		if _, err := netns.CleanStale(ctx); err != nil {
			return nil, &NamespaceError{Stale: true, Err: err}
		}
		ns, err := netns.New(ctx, netns.Options{})
		if err != nil {
			return nil, &NamespaceError{Err: err}
		}
		defer ns.Close()
		h.ns, h.Sender, h.Receiver = ns, ns.Outer, ns.Inner
		rep.Sender, rep.Receiver, rep.Namespace = ns.Outer, ns.Inner, ns.Name
	}
	if s.Started != nil {
		s.Started(*rep)
	}
	start := time.Now()
	defer func() { rep.Elapsed = time.Since(start) }()
	for _, size := range s.Sizes {
		frame := size - 4
		c := s.Search
		c.MaxRate = s.MaxRate.FramesPerSecond(float64(frame), s.Layer)
		if !s.MinRate.Unlimited() {
			c.MinRate = s.MinRate.FramesPerSecond(float64(frame), s.Layer)
		}
		res, err := Search(ctx, c, s.watch(size, c, h.TrialFunc(frame)))
		bits := float64(frame) * 8
		if s.Layer == pace.L1 {
			bits = float64(frame+pace.L1Overhead) * 8
		}
		rep.Sizes = append(rep.Sizes, SizeResult{Size: size, Frame: frame, MaxRatePPS: c.MaxRate, Result: res,
			BPS: res.ThroughputPPS * bits, ThroughputBPS: res.ThroughputPPS * float64(size+20) * 8})
		if err == nil {
			err = s.after(ctx, h, &rep.Sizes[len(rep.Sizes)-1])
		}
		if err != nil {
			if ctx.Err() != nil {
				// A stop signal is how a search is cut short, not a
				// failure of the path: what was found is the report.
				rep.Interrupted = true
				return rep, ctx.Err()
			}
			rep.Error = err.Error()
			return rep, err
		}
	}
	return rep, nil
}

// after runs the tests that follow a size's search: latency at the
// throughput found, and back-to-back bursts.
func (s Setup) after(ctx context.Context, h Harness, r *SizeResult) error {
	if s.Latency && r.ThroughputPPS > 0 {
		rate := 0.0
		for _, t := range r.Trials {
			if t.Pass && !t.Warmup && t.AchievedPPS == r.ThroughputPPS {
				rate = t.Rate
			}
		}
		if rate == 0 {
			rate = r.ThroughputPPS
		}
		m, err := h.Trial(ctx, r.Frame, rate, s.Search.Trial)
		if err != nil {
			return fmt.Errorf("ndr: latency test at %.0f frames/s: %w", rate, err)
		}
		r.Latency = &LatencyTest{Rate: rate, Outcome: m.Outcome(), Latency: m.Receiver.Latency}
	}
	if s.BackToBack != nil {
		b, err := BackToBack(ctx, *s.BackToBack, func(ctx context.Context, n uint64) (Outcome, error) {
			m, err := h.Measure(ctx, r.Frame, func(spec *job.Spec) { spec.Count = n }) // flat out
			if err != nil {
				return Outcome{}, err
			}
			return m.Outcome(), nil
		})
		r.BackToBack = &b
		if err != nil {
			return err
		}
	}
	return nil
}

// watch is trial with OnTrial called after each trial that ran (Search
// runs the warm-up, Config.Warmup > 0, as its first).
func (s Setup) watch(size int, c Config, trial TrialFunc) TrialFunc {
	if s.OnTrial == nil {
		return trial
	}
	warmup := c.Warmup > 0
	return func(ctx context.Context, rate float64, d time.Duration) (Outcome, error) {
		warm := warmup
		warmup = false
		o, err := trial(ctx, rate, d)
		if err == nil {
			s.OnTrial(size, judge(c.Loss, rate, o, warm))
		}
		return o, err
	}
}

// withDefaults fills in the defaults of s and checks it.
func (s Setup) withDefaults() (Setup, error) {
	if len(s.Sizes) == 0 {
		s.Sizes = DefaultSizes()
	}
	for i, n := range s.Sizes {
		if n < 64 || n > 9022 {
			return s, fmt.Errorf("ndr: size %d: give Ethernet frame sizes with the FCS, 64 to 9022", n)
		}
		if slices.Contains(s.Sizes[:i], n) {
			return s, fmt.Errorf("ndr: size %d is given twice: give each size once", n)
		}
	}
	if s.Backend == "" {
		s.Backend = "afpacket"
	}
	if s.Backend != "afpacket" && s.Backend != "afxdp" {
		return s, fmt.Errorf("ndr: backend %q: the sender is afpacket or afxdp", s.Backend)
	}
	if s.QdiscBypass && s.Backend != "afpacket" {
		return s, errors.New("ndr: QdiscBypass is an afpacket option")
	}
	if s.MaxRate.Unlimited() || s.MaxRate.IFG() || s.MaxRate.LinkShare() {
		return s, fmt.Errorf("ndr: maximum rate %v: give a frame or bit rate, e.g. 10Gbps or 2Mpps", s.MaxRate)
	}
	if s.MinRate.IFG() || s.MinRate.LinkShare() {
		return s, fmt.Errorf("ndr: minimum rate %v: give a frame or bit rate, e.g. 10kpps", s.MinRate)
	}
	for _, size := range s.Sizes {
		// A bit rate and a frame rate compare differently at each size.
		frame := float64(size - 4)
		hi := s.MaxRate.FramesPerSecond(frame, s.Layer)
		if !(hi > 0) {
			return s, fmt.Errorf("ndr: maximum rate %v: give a rate above 0", s.MaxRate)
		}
		if !s.MinRate.Unlimited() {
			if lo := s.MinRate.FramesPerSecond(frame, s.Layer); !(lo > 0) || lo > hi {
				return s, fmt.Errorf("ndr: minimum rate %v: at %d B it is %.0f frames/s, above the maximum rate %v (%.0f frames/s)", s.MinRate, size, lo, s.MaxRate, hi)
			}
		}
	}
	c := s.Search
	c.MaxRate, c.MinRate = 1, 0 // the rates are checked above, per size
	if _, err := c.withDefaults(); err != nil {
		return s, err
	}
	if s.Search.Trial == 0 {
		s.Search.Trial = defaultTrial
	}
	if (s.Interface == "") != (s.RxInterface == "") {
		return s, errors.New("ndr: Interface and RxInterface go together: give both (send on one, receive on the other), or neither for a veth pair of its own")
	}
	if s.Interface != "" && s.Interface == s.RxInterface && s.Netns == s.RxNetns {
		return s, fmt.Errorf("ndr: Interface and RxInterface both name %s, and the receiver does not count the frames this host sends: receive where they arrive", s.Interface)
	}
	if s.Interface == "" && (s.Netns != "" || s.RxNetns != "" || s.SrcIP != "" || s.RxSrcIP != "" || (s.Bidir && !s.Router)) {
		return s, errors.New("ndr: the ports' namespaces, addresses and Bidir are for a path between two given interfaces: give Interface and RxInterface")
	}
	if s.Router && s.Interface != "" {
		return s, errors.New("ndr: Router builds the path it sends through: give it without Interface and RxInterface")
	}
	if s.RouterShape < 0 || (s.RouterShape > 0 && (!s.Router || s.RouterShape < 8000)) {
		return s, fmt.Errorf("ndr: router shape %v bit/s: give 8000 or more, with Router", s.RouterShape)
	}
	if b := s.BackToBack; b != nil {
		if _, err := b.withDefaults(); err != nil {
			return s, err
		}
	}
	return s, nil
}
