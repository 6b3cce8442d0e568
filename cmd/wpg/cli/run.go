package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/spf13/cobra"

	"github.com/wpg-dev/wpg/cmd/wpg/cli/config"
	"github.com/wpg-dev/wpg/engine"
	"github.com/wpg-dev/wpg/internal/hdrlog"
	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/nexthop"
	"github.com/wpg-dev/wpg/report"
)

// runJob is what `wpg send` and `wpg bench` have in common: map the flags
// and wpg.toml onto a job.Spec, start the job, show progress (or a line
// per --interval), print the report and map the outcome to the exit code.
// bench --repeat N runs the job N times and reports the last run with the
// median and range of all.
func runJob(cmd *cobra.Command, f *runFlags, command, templatePath string) error {
	spec, err := sendSpec(cmd, f, command, templatePath)
	if err != nil {
		return err
	}
	if f.interval < 0 || (f.interval > 0 && f.interval < report.MinInterval) {
		return fmt.Errorf("--interval %v: give a period of %v or more, such as 1s, or 0 for none", f.interval, report.MinInterval)
	}
	if f.jsonStream && f.interval == 0 {
		f.interval = defaultStreamInterval
	}
	if f.hdrOut != "" && spec.Rate == "" {
		return fmt.Errorf("--hdr-out %s writes the pacer's lateness histogram, which only a paced run has: add --rate (e.g. --rate 1Mpps)", f.hdrOut)
	}
	repeat := max(f.repeat, 1)
	if f.repeat < 0 || f.repeat > 100 {
		return fmt.Errorf("--repeat %d: give 1 to 100", f.repeat)
	}
	// The report goes to stdout unless stdout carries the data (pipe).
	out := cmd.OutOrStdout()
	if job.DataOnStdout(spec) {
		out = cmd.ErrOrStderr()
	}
	prov := provenance()
	var stopMetrics func() // --metrics-listen, from the first run's start
	defer func() {
		if stopMetrics != nil {
			stopMetrics()
		}
	}()
	started := func(run *job.Run) error {
		f.live.set(run, spec, f.metrics.job)
		if stopMetrics != nil || f.metrics.listen == "" {
			return nil
		}
		var err error
		stopMetrics, err = serveMetrics(cmd, &f.metrics, &f.live, run.Segment(), f.json || job.DataOnStdout(spec))
		if err != nil {
			run.Stop()
			<-run.Done()
		}
		return err
	}
	var rep *report.Report
	var runErr error
	var pps []float64
	var lateness []hdrWindow
	if f.jsonStream {
		if err := report.WriteEvent(out, report.Event{Event: "start", Data: report.StreamStart{Schema: report.Schema, Command: command,
			IntervalSeconds: f.interval.Seconds(), Provenance: &prov}}); err != nil {
			return err
		}
	}
	for i := range repeat {
		var each func(report.Interval)
		switch {
		case f.jsonStream:
			ev := report.Event{Event: "interval"}
			if repeat > 1 {
				ev.Run = i + 1
			}
			each = func(in report.Interval) {
				ev.Data = in
				_ = report.WriteEvent(out, ev) // a reader gone: the report's write says so
			}
		case !f.json && f.interval > 0:
			if repeat > 1 {
				fmt.Fprintf(out, "run %d of %d\n", i+1, repeat)
			}
			each = func(in report.Interval) { report.WriteIntervalLine(out, in) }
		}
		rep, runErr, lateness, err = runOnce(cmd, f, spec, each, started)
		if err != nil {
			return err
		}
		if rep == nil {
			// Nothing started (a backend could not open): the error is the whole story.
			return &ExitError{Code: ExitRuntime, Err: f.origins.interfaceError("", runErr)}
		}
		pps = append(pps, rep.PPS)
		if runErr != nil || rep.Failed != nil || cmd.Context().Err() != nil {
			break
		}
	}
	rep.Provenance = &prov
	if len(pps) > 1 {
		rep.Repeats = report.RepeatsOf(pps)
	}
	if f.hdrOut != "" {
		start, err := time.Parse(time.RFC3339Nano, rep.Started)
		if err != nil {
			start, _ = time.Parse(time.RFC3339, prov.Start)
		}
		if err := writeHdr(f.hdrOut, lateness, start, "lateness", "wpg "+command+": lateness of the pacer's grants against their deadlines (ns)",
			"the lateness histogram comes from paced runs: add --rate"); err != nil {
			return &ExitError{Code: ExitRuntime, Err: err}
		}
	}
	if f.jsonStream {
		if err := report.WriteEvent(out, report.Event{Event: "end", Data: rep}); err != nil {
			return err
		}
	} else if f.json {
		if err := rep.WriteJSON(out); err != nil {
			return err
		}
	} else {
		rep.WriteTable(out)
	}
	if runErr != nil {
		if rep.Frames == 0 {
			// Nothing ran: the error is the whole story.
			return &ExitError{Code: ExitRuntime, Err: f.origins.interfaceError("", runErr)}
		}
		if we := (*engine.WorkerError)(nil); errors.As(runErr, &we) && we.Frames >= 0 {
			// The worker's error says how far it got (and the report
			// above how far the run got): a third count only repeats.
			return &ExitError{Code: ExitRuntime, Err: fmt.Errorf("run stopped by an error: %w", runErr)}
		}
		return &ExitError{Code: ExitRuntime, Err: fmt.Errorf("run stopped by an error after %d frames: %w", rep.Frames, runErr)}
	}
	if rep.Failed != nil {
		return &ExitError{Code: ExitCheckFailed, Err: rep.Failed}
	}
	return nil
}

// runOnce starts spec and waits for its report. With --interval it takes
// a snapshot every period, hands each interval to each as it closes (nil:
// none) and puts the intervals, summing to the totals, into the report;
// without, it draws the progress line on a terminal. lateness is, with
// --hdr-out, the pacer's histogram of each interval, or of the whole run
// without --interval (nil flat out); err is a start error (already an
// exit error), runErr the run's.
func runOnce(cmd *cobra.Command, f *runFlags, spec job.Spec, each func(report.Interval), started func(*job.Run) error) (rep *report.Report, runErr error, lateness []hdrWindow, err error) {
	env := cliEnv(cmd)
	env.SnapshotEvery = f.interval // an own receiver's progress as often as the lines
	run, err := job.Start(cmd.Context(), spec, env)
	if err != nil {
		return nil, nil, nil, startError(cmd, "", f.origins, err)
	}
	if err := started(run); err != nil {
		return nil, nil, nil, err
	}
	markStarted(cmd) // the input is valid: what fails from here on is the run
	var intervals []report.Interval
	var ats []job.Snapshot // the snapshot that closed each interval
	if f.interval > 0 {
		// Samples on the run's own clock, each interval handed on as it
		// closes (job.Run.IntervalsAt).
		intervals = run.IntervalsAt(f.interval, func(in report.Interval, at job.Snapshot) {
			ats = append(ats, at)
			if each != nil {
				each(in)
			}
		})
	} else {
		prog := report.StartProgress(cmd.ErrOrStderr(), 500*time.Millisecond, func() (uint64, uint64, time.Duration) {
			s := run.Snapshot()
			return s.Frames, s.Bytes, s.Elapsed
		})
		<-run.Done()
		prog.Stop()
	}
	rep, runErr = run.Report(), run.Err()
	end := run.Snapshot()
	if f.hdrOut != "" && rep != nil {
		if lateness, err = latenessWindows(end, intervals, ats, rep.Seconds); err != nil {
			return rep, runErr, nil, err
		}
	}
	if rep != nil && f.interval > 0 {
		rep.Intervals = intervals
	}
	return rep, runErr, lateness, nil
}

// sendSpec maps send's and bench's flags and wpg.toml onto a job.Spec. A
// flag that the applies-only-to rule covers goes into the Spec only when
// the user set it, so that defaults never trip the rule.
func sendSpec(cmd *cobra.Command, f *runFlags, command, templatePath string) (job.Spec, error) {
	cfg, err := applyConfig(cmd, f)
	if err != nil {
		return job.Spec{}, err
	}
	if err := checkPinFlags(cmd, f); err != nil {
		return job.Spec{}, err
	}
	if err := checkConfigPorts(cfg); err != nil {
		return job.Spec{}, err
	}
	set := func(name string) bool { return changed(cmd, name) != nil }
	if set("pcap-speed") && f.pcapSpeed == 0 {
		// In a job spec 0 means "not given" (1); typed out, it reads like
		// tcpreplay's top speed, which is --rate max here.
		return job.Spec{}, usageError(errors.New("--pcap-speed 0: the factor divides the capture's gaps and must be from 0.001 to 1000000 (2 = twice as fast, 0.5 = half speed); to replay as fast as the path allows, give --rate max instead"))
	}
	s := job.Spec{
		Command:   command,
		Template:  templatePath,
		Pcap:      f.pcap,
		PcapSpeed: f.pcapSpeed,
		Backend:   f.backend,

		Interface:   f.iface,
		NoTxRing:    f.noTxRing,
		QdiscBypass: f.qdiscBypass,
		BusyPoll:    f.busyPoll,
		Output:      f.output,
		Format:      f.format,
		FIFO:        f.fifo,
		Vmsplice:    f.vmsplice,
		Connect:     f.connect,
		RecvMode:    f.recvMode,
		BusyWait:    f.busyWait,
		Slots:       f.slots,
		Device:      f.device,
		Sync:        f.osync,
		// bench is one command: a local path starts its own receiver.
		StartReceiver: command == "bench",

		Rate:       f.rate,
		RateLayer:  f.rateLayer,
		Burst:      f.burst,
		RTPriority: f.rtPriority,
		Clock:      f.clock,

		Count:    f.count,
		Segment:  f.segment,
		Duration: f.duration,
		Workers:  f.workers,
		Batch:    f.batch,
		AutoPin:  f.autoPin,
		Cores:    f.pinCores,

		Size:        f.size,
		Raw:         f.raw,
		PayloadFile: f.payloadFile,

		RxInterface: f.rxIface,
		RxBackend:   f.rxBackend,
		Netns:       f.netns,
		RxNetns:     f.rxNetns,
		SrcIP:       f.srcIP,
		Gateway:     f.gateway,
		RxSrcIP:     f.rxSrcIP,
		RxGateway:   f.rxGateway,
		Bidir:       f.bidir,

		Limits: job.Limits{
			RingBytes:           cfg.TX.RingBytes,
			PrerenderMaxBytes:   cfg.TX.PrerenderMaxBytes,
			PrerenderMaxPackets: cfg.TX.PrerenderMaxPackets,
			SrcIP:               cfg.Port.SrcIP,
			Gateway:             cfg.Port.Gateway,
			RxSrcIP:             cfg.Port.RxSrcIP,
			RxGateway:           cfg.Port.RxGateway,
		},
	}
	if f.pinCore >= 0 {
		s.Cores = strconv.Itoa(f.pinCore)
	}
	if command == "send" {
		f.origins = sendDefaults(cfg, &s, set) // wpg.toml's [send] (defaults.go)
	}
	if f.origins == nil {
		f.origins = origins{}
	}
	f.origins.ports(cfg)
	if s.Segment, err = segmentValue(f.segment, lookupEnv); err != nil {
		return s, usageError(err)
	}
	if err := f.metrics.checkJob(true); err != nil {
		return s, usageError(err)
	}
	if err := f.metrics.checkLinger(cmd); err != nil {
		return s, usageError(err)
	}
	if err := f.metrics.checkListen(); err != nil {
		return s, usageError(err)
	}
	if set("ring-depth") {
		s.RingDepth = f.ringDepth
		if f.ringDepth < 1 {
			return s, fmt.Errorf("--ring-depth %d: must be at least 1", f.ringDepth)
		}
	}
	if set("ring-bytes") {
		s.RingBytes = cfg.TX.RingBytes
	}
	if set("prerender-max-bytes") {
		s.PrerenderMaxBytes = cfg.TX.PrerenderMaxBytes
	}
	if set("prerender-max-packets") {
		s.PrerenderMaxPackets = cfg.TX.PrerenderMaxPackets
	}
	if set("tx-copy") {
		s.TxCopy = f.txCopy
	}
	if set("queue") {
		s.Queue = &f.queue
	}
	if set("xdp-mode") {
		s.XDPMode = f.xdpMode
	}
	s.DPDKArgs = dpdkArgs(set("dpdk-args"), f.dpdkArgs, s.BackendName(), cfg)
	if set("wait") {
		s.Wait = f.wait
	}
	if set("wake-boost") {
		s.WakeBoost = f.wakeBoost
	}
	if set("fail-under") {
		s.FailUnder = &f.failUnder
	}
	if set("plan") {
		s.Plan = f.plan
	}
	if set("fill") {
		s.Fill = f.fill
	}
	if set("seed") {
		s.Seed = &f.seed
	}
	if set("verify") {
		s.Verify = f.verify
	}
	if set("sync-mode") && f.syncMode != -1 {
		s.SyncMode = &f.syncMode
	}
	n, err := parsePipeSize(f.pipeSize)
	s.PipeSize = int64(n)
	return s, err
}

// checkConfigPorts checks wpg.toml's [port] addresses where the file
// gives them, naming the file's line: a run that takes them (no flag, no
// template ports:) would fail on them later without saying where they
// came from.
func checkConfigPorts(cfg *config.Config) error {
	for _, k := range [][2]string{{"port.src_ip", "port.gateway"}, {"port.rx_src_ip", "port.rx_gateway"}} {
		addr, _ := cfg.GetText(k[0])
		gw, _ := cfg.GetText(k[1])
		if addr == "" && gw == "" {
			continue
		}
		key, value := k[0], addr
		_, err := nexthop.ParsePort(addr, gw)
		if addr == "" {
			err = errors.New("needs the port's own address: add " + k[0] + " = \"ADDRESS/PREFIX\" (e.g. \"198.18.0.1/24\")")
			key, value = k[1], gw
		}
		if err == nil {
			continue
		}
		if pe, ok := err.(*nexthop.PortError); ok {
			if pe.Field == nexthop.FieldGateway {
				key, value = k[1], gw
			}
			err = fmt.Errorf("%s; %s", pe.Why, pe.Remedy)
		}
		return usageError(fmt.Errorf("%s: %s %q: %v", cfg.Sources[key], key, value, err))
	}
	return nil
}

// checkPinFlags checks what only the flags can get wrong: --pin-core,
// --pin-cores and --auto-pin are three ways to say job.Spec's Cores and
// AutoPin.
func checkPinFlags(cmd *cobra.Command, f *runFlags) error {
	var pins []string
	for _, name := range []string{"pin-core", "pin-cores", "auto-pin"} {
		if changed(cmd, name) != nil {
			pins = append(pins, "--"+name)
		}
	}
	switch {
	case len(pins) > 1:
		return fmt.Errorf("%s each choose the workers' CPUs: give only one of them", strings.Join(pins, " and "))
	case f.pinCore < -1:
		return fmt.Errorf("--pin-core %d: give a CPU number (0 or more), or leave it out for no pinning", f.pinCore)
	case f.pinCore >= 0 && f.workers != 1:
		return fmt.Errorf("--pin-core pins one worker, got --workers %d: use --pin-cores or --auto-pin", f.workers)
	}
	return nil
}

// cliEnv is the job environment of a command: the process's streams
// where cobra's are files (a test's buffers are not).
func cliEnv(cmd *cobra.Command) job.Env {
	var env job.Env
	if f, ok := cmd.InOrStdin().(*os.File); ok {
		env.Stdin = f
	}
	if f, ok := cmd.OutOrStdout().(*os.File); ok {
		env.Stdout = f
	}
	if f, ok := cmd.ErrOrStderr().(*os.File); ok {
		env.Stderr = f
	}
	return env
}

// addReportFlags adds the report flags of send and bench.
func addReportFlags(cmd *cobra.Command, f *runFlags) {
	fl := cmd.Flags()
	fl.DurationVar(&f.interval, "interval", 0, "print a line per period (rate, frames, lateness p99) and add intervals[] to the JSON, e.g. 1s (at least 50ms; 0: none; 1s with --json-stream)")
	fl.BoolVar(&f.jsonStream, "json-stream", false, "print JSON as the run goes, one object a line (iperf3's --json-stream): a start event, an interval event per --interval (default 1s), and the end event with the report")
	fl.StringVar(&f.hdrOut, "hdr-out", "", "write the pacer's lateness histogram (--rate) to this `FILE` as an HdrHistogram log: one histogram per --interval, or one for the run")
}

// defaultStreamInterval is the period of --json-stream's interval events
// when no --interval is given.
const defaultStreamInterval = time.Second

// hdrWindow is one histogram of an --hdr-out log: from From to To
// (seconds since the run's start), in internal/hist's JSON (nil: no
// value came in, an empty histogram).
type hdrWindow struct {
	From, To float64
	Hist     []byte
}

// latenessWindows are a sender's lateness histograms for --hdr-out: one
// per interval (the grants between the snapshots that closed it and the
// one before; the last interval's end is the run's end, end), or one for
// the whole run without intervals; nil for a flat-out run.
func latenessWindows(end job.Snapshot, intervals []report.Interval, ats []job.Snapshot, seconds float64) ([]hdrWindow, error) {
	if len(intervals) == 0 || len(ats) != len(intervals) {
		h, err := end.LatenessHistogram()
		if h == nil || err != nil {
			return nil, err
		}
		return []hdrWindow{{0, seconds, h}}, nil
	}
	ats[len(ats)-1] = end // the totals close the last interval
	var out []hdrWindow
	var prev job.Snapshot
	for i, in := range intervals {
		h, err := ats[i].LatenessHistogramSince(prev)
		if h == nil || err != nil {
			return nil, err
		}
		out = append(out, hdrWindow{in.Start, in.End, h})
		prev = ats[i]
	}
	return out, nil
}

// writeHdr writes histograms (internal/hist's JSON, from snapshots or a
// receiver's progress) to path as an HdrHistogram interval log
// (--hdr-out), a histogram per window, each at its time from start. No
// histogram at all is an error that says why there is none.
func writeHdr(path string, windows []hdrWindow, start time.Time, tag, comment, none string) error {
	var hs []*hdrhistogram.Histogram
	var bounds *hdrhistogram.Histogram
	for _, w := range windows {
		if len(w.Hist) == 0 || string(w.Hist) == "null" {
			hs = append(hs, nil)
			continue
		}
		h, err := hdrlog.Decode(w.Hist)
		if err != nil {
			return fmt.Errorf("--hdr-out %s: %w", path, err)
		}
		hs = append(hs, h)
		bounds = h
	}
	if bounds == nil {
		return fmt.Errorf("--hdr-out %s: no histogram to write: %s", path, none)
	}
	var buf bytes.Buffer
	l, err := hdrlog.NewLog(&buf, start, comment)
	if err != nil {
		return fmt.Errorf("--hdr-out %s: %w", path, err)
	}
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	for i, w := range windows {
		h := hs[i]
		if h == nil { // nothing came in: an empty histogram keeps the log's time line
			h = hdrhistogram.New(bounds.LowestTrackableValue(), bounds.HighestTrackableValue(), int(bounds.SignificantFigures()))
		}
		if err := l.Interval(h, at(w.From), at(w.To), tag); err != nil {
			return fmt.Errorf("--hdr-out %s: %w", path, err)
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--hdr-out: %w", err)
	}
	return nil
}
