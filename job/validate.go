package job

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/engine"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/pace"
	"github.com/wpg-dev/wpg/template"
)

// prepared is a validated Spec, ready for the engine.
type prepared struct {
	spec      Spec
	reg       backend.Registration
	rate      pace.Rate
	layer     pace.Layer
	wait      pace.WaitMode
	boost     pace.Boost
	clock     *pace.Clock
	frames    *frameSet
	pair      *pairPlan // a port pair, or a port with an address (pair.go); nil otherwise
	allowed   []int
	cores     []int
	opts      backend.Options
	targetFPS float64
	pacer     pace.Config
	notes     []string // said in the report (stdoutFileNote)
	// seg and segs are the run's segment (0 and 1: the whole job), jobID
	// its job identity (Identity).
	seg, segs int
	jobID     string
}

// Validate checks spec as Start would, without starting anything, and
// returns every problem at once as Problems (each an *OptionError; use
// errors.As), or nil. It reads the template and payload files and
// compiles the frames once (streaming, nothing pre-rendered); of env it
// looks only at Stdout (whether it is a pipe).
func Validate(spec Spec, env Env) error {
	_, err := prepare(spec, env)
	return err
}

// prepare validates spec; checks whose inputs already failed are skipped,
// so that each problem is reported once.
func prepare(s Spec, env Env) (*prepared, error) { return prepareDir(s, env, nil) }

// prepareDir is prepare with the streams of a port pair's reverse
// direction in place of the template (dir nil: the template's).
func prepareDir(s Spec, env Env, dir *direction) (*prepared, error) {
	var p problems
	pr := &prepared{spec: s}
	if s.Command == "" {
		s.Command = "send"
	}
	pr.spec = s

	reg, err := backend.Lookup(s.BackendName())
	if err != nil {
		p.wrap("backend", s.BackendName(), err, "choose one of "+strings.Join(backend.Names(), ", "))
		return nil, p.err()
	}
	pr.reg = reg
	if s.Workers < 1 || s.Workers > MaxWorkers {
		p.add("workers", strconv.Itoa(s.Workers), fmt.Sprintf("is outside 1 to %d (the documented limit; more threads than CPUs only take turns)", MaxWorkers), fmt.Sprintf("give 1 to %d", MaxWorkers))
	} else if reg.SingleWorker && s.Workers > 1 {
		p.add("workers", strconv.Itoa(s.Workers), fmt.Sprintf("backend %s supports one worker only%s", reg.Name, reg.SingleWorkerWhy), "use {workers} 1")
	} else {
		pr.seg, pr.segs, _ = checkSegment(&p, s, reg) // segment.go
	}
	if s.Batch < 1 || s.Batch > 65536 {
		p.add("batch", strconv.Itoa(s.Batch), "is outside 1 to 65536", "give 1 to 65536 frames per batch (e.g. 256)")
	}
	if s.RingDepth < 0 {
		p.add("ring_depth", strconv.Itoa(s.RingDepth), "is negative", "give a ring depth of 1 or more, or 0 for the backend's default")
	}
	if s.Duration < 0 {
		p.add("duration", s.Duration.String(), "must not be negative", "give 0 for no limit, or a duration such as 10s")
	}
	if s.Slots < 0 || s.Slots > MaxSlots {
		p.add("slots", strconv.Itoa(s.Slots), fmt.Sprintf("is outside 0 to %d ring slots", MaxSlots), fmt.Sprintf("give 1 to %d, or 0 for automatic", MaxSlots))
	}
	if s.FailUnder != nil && !(*s.FailUnder > 0 && *s.FailUnder <= 1) {
		p.add("fail_under", strconv.FormatFloat(*s.FailUnder, 'g', -1, 64), "is not a share of the target rate (above 0 and at most 1)", "give the smallest acceptable share, e.g. 0.95")
	}
	if reg.Name == "pcapfile" && s.Output == "" {
		p.add("output", "", "is needed: backend pcapfile writes a capture file", "add {output} FILE.pcap")
	}
	if reg.Kind == backend.KindNetwork && reg.Name != "pcapfile" && s.Interface == "" {
		p.add("interface", "", fmt.Sprintf("is needed: backend %s sends on a network interface", reg.Name), interfaceFix(reg.Name, "add {interface} IFACE (e.g. {interface} lo, or a veth)"))
	}
	checkPair(&p, s, reg) // pair.go

	var parsed *template.Spec // the template, when timedInput read it
	timed, looked := false, false
	if s.Rate == "" && s.Limits.Rate != "" {
		// The site's rate, unless the input keeps its own schedule.
		if timed, parsed = timedInput(s); !timed {
			s.Rate = s.Limits.Rate
			pr.spec.Rate = s.Rate
		}
		looked = true
	}
	rateOK := true
	if pr.rate, err = pace.ParseRate(s.Rate); err != nil {
		p.wrap("rate", s.Rate, err, "give a rate such as 1Mpps, 10Gbps or 15fps, or nothing for flat out")
		rateOK = false
	}
	if rateOK {
		var note string
		pr.rate, note, rateOK = linkRate(&p, s, pr.rate) // --rate 50% (streams.go)
		if note != "" {
			pr.notes = append(pr.notes, note)
		}
	}
	if rateOK && pr.rate.Unlimited() && !looked {
		timed, parsed = timedInput(s)
	}
	checkApplies(&p, s, reg, rateOK && (!pr.rate.Unlimited() || timed))
	if reg.Name == "pipe" && peerChoice(s, env).Mode == backend.PeerConnect {
		// The pipe reads {connect} auto and - only: a socket path was
		// refused by the worker, as a runtime error (exit 1).
		p.add("connect", s.Connect, "the pipe path has no rendezvous socket to meet a receiver at",
			"give {fifo} PATH (a FIFO the reader opens), or pipe standard output into the reader, or drop {connect} to let wpg start one")
	}
	if s.Raw && reg.NeedsPeer && s.Connect == "" && s.FIFO == "" && peerChoice(s, env).Mode == backend.PeerOwn {
		// The run would start wpg's own receiver, which cannot read
		// frames without a wpg header.
		switch {
		case s.StartReceiver:
			p.add("raw", "", fmt.Sprintf("frames carry no wpg header, so the receiver this run starts for %s cannot take them", reg.Name), "drop {raw}, or send them with {start_receiver} off into your own reader")
		case reg.Name == "pipe":
			p.add("raw", "", "frames carry no wpg header, and standard output is not a pipe, so wpg's own receiver would have to read them",
				"pipe stdout into the program that reads them (wpg send --backend pipe --raw … | ffmpeg …), or give {fifo} PATH")
		default:
			p.add("raw", "", fmt.Sprintf("frames carry no wpg header, and without {connect} this run starts wpg's own receiver for %s, which cannot take them", reg.Name),
				"drop {raw} (headerless frames are for readers of your own: --backend pipe into a pipe or {fifo})")
		}
	}
	if pr.layer, err = pace.ParseLayer(s.RateLayer); err != nil {
		p.wrap("rate_layer", s.RateLayer, err, "use l2 or l1")
	}
	if pr.wait, err = pace.ParseWait(s.Wait); err != nil {
		p.wrap("wait", s.Wait, err, "use hybrid, spin or sleep")
	}
	if pr.boost, err = pace.ParseBoost(s.WakeBoost); err != nil {
		p.wrap("wake_boost", s.WakeBoost, err, "use auto, on or off")
	}
	if backend.CheckTxCopy(s.TxCopy) != nil {
		p.add("tx_copy", s.TxCopy, "is not a copy mode", "use auto, linear or frags")
	}
	if s.RTPriority < 0 || s.RTPriority > 99 {
		p.add("rt_priority", strconv.Itoa(s.RTPriority), "is outside 0 to 99", "give 1-99 (SCHED_FIFO), or 0 for the normal scheduler")
	}
	if s.Burst < 0 {
		p.add("burst", strconv.Itoa(s.Burst), "is negative", "give 0 (automatic) or a number of frames per grant")
	}
	if pr.clock, err = pace.NewClock(clockName(s.Clock)); err != nil {
		p.wrap("clock", s.Clock, err, "use auto, tsc or monotonic")
	}
	if s.PipeSize != 0 && (s.PipeSize < 4096 || s.PipeSize > 1<<31) {
		p.add("pipe_size", strconv.FormatInt(s.PipeSize, 10), "is outside 4KiB to 2GiB", "give a size such as 64KiB or 1MiB, or 0 for the system's")
	}
	if len(p.list) > 0 {
		// The frames and the cores depend on what failed above.
		return nil, p.err()
	}

	if pr.frames, err = newFrames(&p, s, reg, parsed, dir); err != nil {
		return nil, p.err()
	}
	if planPair(&p, pr, env); len(p.list) > 0 {
		return nil, p.err()
	}
	if pr.allowed, err = sys.AllowedCPUs(); err != nil {
		return nil, err
	}
	if pr.cores, err = chooseCores(s, pr.allowed); err != nil {
		p.list = append(p.list, AsProblems(err)...)
		return nil, p.err()
	}
	pr.opts = backendOptions(s, env, pr.frames)
	if reg.Check != nil {
		if err := reg.Check(pr.opts); err != nil {
			p.wrap("backend", "", err, "change the setting it names ("+backendDoc(reg)+")")
			return nil, p.err()
		}
	}
	if pr.frames.timed { // the streams' own schedules (streams.go)
		if s.Rate != "" {
			p.add("rate", s.Rate, "does not apply: the template's streams keep their own schedules (rate:, burst:, a capture's timing: original)", "drop {rate}, or remove rate: from the streams to share {rate} by share:")
			return nil, p.err()
		}
		if s.Burst != 0 {
			p.add("burst", fmt.Sprint(s.Burst), "does not apply: the streams keep their own schedules, and each grant releases the frames due by then", "drop {burst} (a stream's burst: key shapes its bursts)")
			return nil, p.err()
		}
		pr.targetFPS = pr.frames.timedFPS / float64(pr.segs)
		pr.pacer = timedPacer(pr.frames.timedFPS, s.Workers*pr.segs, s, pr)
	}
	if !pr.rate.Unlimited() {
		pr.targetFPS = pr.rate.FramesPerSecond(pr.frames.meanFrame, pr.layer) / float64(pr.segs)
		if !(pr.targetFPS > 0) {
			p.add("rate", s.Rate, "gives no frames per second", "give a higher rate, or nothing for flat out")
			return nil, p.err()
		}
		// Every worker of every segment keeps its share of the rate.
		if err := pr.rate.CheckRange(pr.frames.meanFrame, pr.layer, s.Workers*pr.segs); err != nil {
			p.wrap("rate", s.Rate, err, "give a rate in the range it names")
			return nil, p.err()
		}
		pc := pr.rate.Config(pr.frames.meanFrame, pr.layer, s.Workers*pr.segs) // the worker's share; IFG forces burst 1
		pc.Burst, pc.Wait, pc.Clock, pc.Priority, pc.WakeBoost = s.Burst, pr.wait, pr.clock, s.RTPriority, pr.boost
		pr.pacer = pc
	}
	if n := stdoutFileNote(s, env, reg); n != "" {
		pr.notes = append(pr.notes, n)
	}
	if pr.jobID, err = Identity(s); err != nil {
		pr.jobID = "" // a file read a moment ago is gone: the run has no identity
	}
	return pr, nil
}

// stdoutFileNote explains a pipe run whose standard output is a file:
// the pipe path writes to a standard output that is a pipe, and otherwise
// starts a receiver of its own, so `wpg send --backend pipe > out.bin`
// left no frame in out.bin and said nothing about it.
func stdoutFileNote(s Spec, env Env, reg backend.Registration) string {
	if reg.Name != "pipe" || s.FIFO != "" || s.Connect != "" || s.StartReceiver || env.Stdout == nil {
		return ""
	}
	fi, err := env.Stdout.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return "standard output is a file, not a pipe: the frames went to a receiver this run started, not into the file; to keep frames in a file, write a capture (--backend pcapfile -o FILE), or pipe standard output into a reader (wpg send --backend pipe … | cat > FILE)"
}

func clockName(s string) string {
	if s == "" {
		return "auto"
	}
	return s
}

// engineConfig is the engine's view of a prepared run; live learns of
// each worker's pacer (nil: nobody reads them while the run goes).
func (pr *prepared) engineConfig(live *liveLateness) engine.Config {
	s := pr.spec
	ecfg := engine.Config{
		Backend:   pr.reg,
		Options:   pr.opts,
		NewSource: pr.frames.newSource,
		Now:       pr.clock.Now,
		Workers:   s.Workers,
		Cores:     pr.cores,
		Batch:     s.Batch,
		Count:     s.Count,
		Duration:  s.Duration,
		Netns:     netnsPath(s.Netns),
	}
	if pr.segs > 1 {
		// The sources end at the segment's share of every stream
		// (template.SegmentFrames): the engine's split of the job's
		// count over this segment's workers is not theirs.
		ecfg.Count = 0
	}
	if !pr.rate.Unlimited() || pr.frames.timed {
		pc := pr.pacer
		ecfg.NewPacer = func(i int) engine.Pacer {
			p := pace.New(pc)
			live.add(i, p)
			return p
		}
	}
	return ecfg
}

// DataOnStdout reports whether a run of spec writes its frames to the
// standard output (the pipe backend without a FIFO or a receiver of its
// own), so that a CLI prints the report elsewhere.
func DataOnStdout(spec Spec) bool {
	return spec.BackendName() == "pipe" && spec.FIFO == "" && !(spec.StartReceiver && spec.Connect == "")
}

// joinNames is "a, b, c".
func joinNames(names []string) string { return strings.Join(names, ", ") }

// interfaceFix is the fix for a missing interface: a DPDK port is named by
// its id or device name, not a kernel interface ("-i lo" was dpdk's
// example); other backends get fix.
func interfaceFix(backend, fix string) string {
	if backend == "dpdk" {
		return "add {interface} PORT, a DPDK port's id or device name (e.g. {interface} 0, or {interface} net_null0 with --vdev net_null0 in {dpdk_args})"
	}
	return fix
}

// backendDoc names the page of docs/ that describes reg's settings: its
// own for the network paths that have one, dmabuf.md for udmabuf,
// local-paths.md for the other local paths, cli.md for the rest.
func backendDoc(reg backend.Registration) string {
	switch reg.Name {
	case "afpacket", "afxdp", "dpdk", "pcap":
		return "docs/" + reg.Name + ".md"
	case "udmabuf":
		return "docs/dmabuf.md"
	}
	if reg.Kind == backend.KindLocal {
		return "docs/local-paths.md"
	}
	return "docs/cli.md"
}
