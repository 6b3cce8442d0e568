package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/engine"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/peer"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/pace"
	"github.com/wpg-dev/wpg/report"
	"github.com/wpg-dev/wpg/sysinfo"
)

// runJob is what `wpg send` and `wpg bench` have in common: validate every
// input, start the engine, show progress, print the report.
func runJob(cmd *cobra.Command, f *runFlags, command, templatePath string) error {
	ctx := cmd.Context()
	cfg, err := applyConfig(cmd, f)
	if err != nil {
		return err
	}
	reg, err := backend.Lookup(f.backendName())
	if err != nil {
		return err
	}
	if reg.NewSender == nil {
		return fmt.Errorf("backend %s has no sending side", reg.Name)
	}
	if f.workers < 1 || f.workers > maxWorkers {
		return fmt.Errorf("--workers %d: give 1 to %d (the documented limit; more threads than CPUs only take turns)", f.workers, maxWorkers)
	}
	if reg.SingleWorker && f.workers > 1 {
		return fmt.Errorf("backend %s supports one worker only, got --workers %d: use --workers 1", reg.Name, f.workers)
	}
	if f.batch < 1 || f.batch > 65536 {
		return fmt.Errorf("--batch %d: must be between 1 and 65536", f.batch)
	}
	if f.ringDepth < 1 {
		return fmt.Errorf("--ring-depth %d: must be at least 1", f.ringDepth)
	}
	if f.duration < 0 {
		return fmt.Errorf("--duration %s: must not be negative; give 0 for no limit, or a duration such as 10s", f.duration)
	}
	if f.pinCore < -1 {
		return fmt.Errorf("--pin-core %d: give a CPU number (0 or more), or leave it out for no pinning", f.pinCore)
	}
	if f.slots < 0 {
		return fmt.Errorf("--slots %d: give a number of ring slots of 1 or more, or 0 for automatic", f.slots)
	}
	if changed(cmd, "fail-under") != nil && !(f.failUnder > 0 && f.failUnder <= 1) {
		return fmt.Errorf("--fail-under %g: give the smallest acceptable share of the target rate, above 0 and at most 1 (e.g. 0.95)", f.failUnder)
	}
	if reg.Name == "pcapfile" && f.output == "" {
		return fmt.Errorf("backend pcapfile needs an output file: add -o FILE.pcap")
	}
	if reg.Kind == backend.KindNetwork && reg.Name != "pcapfile" && f.iface == "" {
		return fmt.Errorf("backend %s needs an interface: add -i IFACE (e.g. -i lo, or a veth)", reg.Name)
	}

	// Rate control.
	rate, err := pace.ParseRate(f.rate)
	if err != nil {
		return fmt.Errorf("--rate: %w", err)
	}
	if err := checkRunFlags(cmd, f, reg, templatePath, !rate.Unlimited()); err != nil {
		return err
	}
	if command == "bench" && reg.NeedsPeer && f.connect == "" && f.fifo == "" && f.raw {
		return fmt.Errorf("--raw frames carry no wpg header, so the receiver bench starts for %s cannot take them: drop --raw, or use wpg send --raw into your own reader", reg.Name)
	}
	if command == "send" && reg.Name == "pipe" && f.raw && f.connect == "" && f.fifo == "" && !sys.IsPipe(1) {
		// Without a pipe on stdout the pipe sender starts a wpg receiver of
		// its own, which cannot read headerless frames.
		return fmt.Errorf("--raw: standard output is not a pipe, and wpg's own receiver cannot read frames without a wpg header: pipe stdout into the program that reads them (wpg send --backend pipe --raw … | ffmpeg …), or give --fifo PATH")
	}
	layer, err := pace.ParseLayer(f.rateLayer)
	if err != nil {
		return fmt.Errorf("--rate-layer: %w", err)
	}
	wait, err := pace.ParseWait(f.wait)
	if err != nil {
		return fmt.Errorf("--wait: %w", err)
	}
	boost, err := pace.ParseBoost(f.wakeBoost)
	if err != nil {
		return fmt.Errorf("--wake-boost: %w", err)
	}
	if err := backend.CheckTxCopy(f.txCopy); err != nil {
		return err
	}
	if f.rtPriority < 0 || f.rtPriority > 99 {
		return fmt.Errorf("--rt-priority %d: give 1-99 (SCHED_FIFO), or 0 for the normal scheduler", f.rtPriority)
	}
	if f.burst < 0 {
		return fmt.Errorf("--burst %d: must be 0 (automatic) or more", f.burst)
	}
	clock, err := pace.NewClock(f.clock)
	if err != nil {
		return fmt.Errorf("--clock: %w", err)
	}

	// Frames.
	frames, err := newFrames(f, cfg, reg, templatePath)
	if err != nil {
		return err
	}

	// Pinning.
	allowedCPUs, err := sys.AllowedCPUs()
	if err != nil {
		return err
	}
	cores, err := chooseCores(f, allowedCPUs)
	if err != nil {
		return err
	}

	opts := backend.Options{
		MaxFrame:       frames.maxFrame,
		MaxUntagged:    frames.maxUntagged,
		UntaggedStream: frames.untaggedStream,
		Interface:      f.iface,
		Batch:          f.batch,
		RingDepth:      f.ringDepth,
		RingBytes:      cfg.TX.RingBytes,
		NoTxRing:       f.noTxRing,
		QdiscBypass:    f.qdiscBypass,
		TxCopy:         f.txCopy,
		Queue:          f.queue,
		XDPMode:        f.xdpMode,
		BusyPoll:       f.busyPoll,
		Output:         f.output,
		Format:         f.format,
		FIFO:           f.fifo,
		Vmsplice:       f.vmsplice,
		Connect:        f.connect,
		RecvMode:       f.recvMode,
		BusyWait:       f.busyWait,
		Slots:          f.slots,
		Verify:         f.verify,
	}
	if opts.PipeSize, err = parsePipeSize(f.pipeSize); err != nil {
		return err
	}
	if err := checkOptions(reg, opts); err != nil {
		return err
	}
	if command == "bench" && reg.NeedsPeer && f.connect == "" && f.fifo == "" {
		// bench is one command: the local path starts its own receiver.
		opts.Connect = peer.AutoPeer
	}
	ecfg := engine.Config{
		Backend:   reg,
		Options:   opts,
		NewSource: frames.newSource,
		Now:       clock.Now,
		Workers:   f.workers,
		Cores:     cores,
		Batch:     f.batch,
		Count:     f.count,
		Duration:  f.duration,
	}
	targetFPS := 0.0
	if !rate.Unlimited() {
		targetFPS = rate.FramesPerSecond(frames.meanFrame, layer)
		if !(targetFPS > 0) {
			return fmt.Errorf("--rate %s gives no frames per second", f.rate)
		}
		if err := rate.CheckRange(frames.meanFrame, layer, f.workers); err != nil {
			return fmt.Errorf("--rate %s: %w", f.rate, err)
		}
		pc := rate.Config(frames.meanFrame, layer, f.workers) // the worker's share; IFG forces burst 1
		pc.Burst, pc.Wait, pc.Clock, pc.Priority, pc.WakeBoost = f.burst, wait, clock, f.rtPriority, boost
		ecfg.NewPacer = func(int) engine.Pacer { return pace.New(pc) }
	}

	// The report goes to stdout unless stdout carries the data (pipe).
	out := cmd.OutOrStdout()
	if reg.Name == "pipe" && f.fifo == "" && opts.Connect != peer.AutoPeer {
		out = cmd.ErrOrStderr()
	}

	markStarted(cmd) // the input is valid: what fails from here on is the run
	job, err := engine.Start(ctx, ecfg)
	if err != nil {
		return err
	}
	prog := report.StartProgress(cmd.ErrOrStderr(), 500*time.Millisecond, func() (uint64, uint64, time.Duration) {
		fr, by := job.Counters().Totals()
		return fr, by, job.Elapsed()
	})
	res := job.Wait()
	prog.Stop()

	if err := res.Err(); err != nil && res.Frames == 0 && !startedAny(res) {
		// Nothing started (a backend could not open): the error is the whole story.
		return &ExitError{Code: 1, Err: err}
	}
	rep := buildReport(command, templatePath, f, res, rate, targetFPS, clock, wait)
	if err := res.Err(); err != nil {
		rep.Error = err.Error()
	}
	if reg.Payload {
		rep.Verify = f.verify
	}
	if layer == pace.L1 {
		countL1(rep)
	}
	rep.Notes = append(rep.Notes, rep.Backend.Adjusted...)
	if n := len(allowedCPUs); f.workers > n && n > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("--workers %d on %d CPUs this process may use: workers take turns on a CPU, which lowers rates and adds jitter; use --workers %d or fewer", f.workers, n, n))
	}
	checkErr := checkOutcome(f, rep)
	if checkErr != nil {
		rep.Notes = append(rep.Notes, checkErr.Error())
	}
	if f.json {
		if err := rep.WriteJSON(out); err != nil {
			return err
		}
	} else {
		rep.WriteTable(out)
	}
	if err := res.Err(); err != nil {
		if res.Frames == 0 {
			// Nothing ran: the error is the whole story.
			return &ExitError{Code: 1, Err: err}
		}
		return &ExitError{Code: 1, Err: fmt.Errorf("run stopped by an error after %d frames: %w", res.Frames, err)}
	}
	if checkErr != nil {
		return &ExitError{Code: ExitCheckFailed, Err: checkErr}
	}
	return nil
}

// maxWorkers is the documented limit of --workers (docs/cli.md); the frame
// signature gives the worker 8 bits.
const maxWorkers = 256

// countL1 turns the report's bit rate into the L1 rate that --rate-layer l1
// asks for: every frame also takes pace.L1Overhead bytes on the wire.
func countL1(rep *report.Report) {
	rep.BPSLayer = pace.L1.String()
	if rep.Seconds > 0 {
		rep.BPS = float64(rep.Bytes+rep.Frames*pace.L1Overhead) * 8 / rep.Seconds
	}
}

// checkOutcome returns the failed check of a finished run (ExitCheckFailed):
// the run's own receivers saw frames lost, duplicated, corrupted or
// missing, or the achieved rate fell under --fail-under.
func checkOutcome(f *runFlags, rep *report.Report) error {
	if len(rep.Verification) > 0 {
		var v struct {
			Frames                               *uint64
			Lost, Duplicated, Corrupted, Missing uint64
		}
		if err := json.Unmarshal(rep.Verification, &v); err != nil {
			return fmt.Errorf("verification failed: the receiver's report is unreadable: %w", err)
		}
		var bad []string
		for _, c := range []struct {
			n    uint64
			what string
		}{{v.Lost, "lost"}, {v.Duplicated, "duplicated"}, {v.Corrupted, "corrupted"}, {v.Missing, "missing"}} {
			if c.n > 0 {
				bad = append(bad, fmt.Sprintf("%d %s", c.n, c.what))
			}
		}
		// Frames lost at the very end leave no gap to count: what the
		// sender sent and the receiver neither saw nor counted lost.
		if v.Frames != nil {
			seen := int64(*v.Frames) - int64(v.Duplicated) + int64(v.Lost)
			if tail := int64(rep.Frames) - seen; tail > 0 && v.Missing == 0 {
				bad = append(bad, fmt.Sprintf("%d of %d sent frames never arrived", tail, rep.Frames))
			}
		}
		if len(bad) > 0 {
			return fmt.Errorf("verification failed: the receiver reports %s", strings.Join(bad, ", "))
		}
	}
	if f.failUnder > 0 && rep.TargetPPS > 0 && rep.AchievedRatio < f.failUnder {
		return fmt.Errorf("rate check failed: achieved %.2f %% of the target %s, under --fail-under %g (%.2f %%)", rep.AchievedRatio*100, rep.Rate, f.failUnder, f.failUnder*100)
	}
	return nil
}

func buildReport(command, templatePath string, f *runFlags, res *engine.Result, rate pace.Rate, targetFPS float64, clock *pace.Clock, wait pace.WaitMode) *report.Report {
	rep := &report.Report{
		Schema:    report.Schema,
		Command:   command,
		Template:  templatePath,
		Batch:     f.batch,
		Frames:    res.Frames,
		Bytes:     res.Bytes,
		Seconds:   res.Seconds,
		BPSLayer:  "l2",
		Stop:      string(res.Stop),
		Clock:     clock.Source(),
		TSC:       clock.TSC(),
		TargetPPS: targetFPS,
	}
	if res.Frames > 0 {
		rep.FrameSize = float64(res.Bytes) / float64(res.Frames)
	} else {
		rep.FrameSize = res.MeanFrame
	}
	if res.Seconds > 0 {
		rep.PPS = float64(res.Frames) / res.Seconds
		rep.BPS = float64(res.Bytes) * 8 / res.Seconds
	}
	if reg, err := backend.Lookup(f.backendName()); err == nil && reg.Payload {
		// Local and device paths: bytes per second of payload, what
		// their users read, rather than a network bit rate.
		header := uint64(frame.PayloadHeaderLen)
		if f.raw {
			header = 0
		}
		rep.Payload = true
		rep.PayloadBytes = res.Bytes - min(res.Bytes, res.Frames*header)
		if res.Seconds > 0 {
			rep.PayloadBytesPerSecond = float64(rep.PayloadBytes) / res.Seconds
		}
	}
	if len(res.Workers) > 0 {
		rep.Backend = res.Workers[0].Info
		rep.Plan, rep.PlanDetail = res.Workers[0].Plan, res.Workers[0].PlanDetail
	}
	var stats []pace.Stats
	var verifications []json.RawMessage
	for _, w := range res.Workers {
		wr := report.Worker{Worker: w.Worker, CPU: w.CPU, NUMANode: w.Info.NUMANode, Frames: w.Frames, Bytes: w.Bytes,
			Seconds: w.Seconds, CPUSeconds: w.CPUSeconds, Mode: w.Info.Mode}
		if w.Seconds > 0 {
			wr.PPS = float64(w.Frames) / w.Seconds
		}
		if w.Err != nil {
			wr.Error = w.Err.Error()
		}
		rep.CPUSeconds += w.CPUSeconds
		rep.Workers = append(rep.Workers, wr)
		if p, ok := w.Pacer.(*pace.Pacer); ok && p != nil {
			stats = append(stats, p.Stats())
			if rep.WakeBoost == "" {
				rep.WakeBoost = p.WakeBoost()
			}
		}
		if len(w.PeerReport) > 0 && json.Valid(w.PeerReport) {
			wr.Verification = json.RawMessage(w.PeerReport)
			verifications = append(verifications, wr.Verification)
		}
	}
	if len(verifications) > 0 {
		rep.Verification = report.MergeVerification(verifications)
	}
	if !rate.Unlimited() {
		rep.Rate = rate.String()
		rep.Wait = wait.String()
		if targetFPS > 0 {
			rep.AchievedRatio = rep.PPS / targetFPS
			if (res.Stop == engine.StopCount || res.Stop == engine.StopSource) && res.Seconds > 0 && res.Frames > uint64(len(res.Workers)) {
				// N frames paced at R take (N-1)/R per worker: the first goes at once.
				rep.AchievedRatio = float64(res.Frames-uint64(len(res.Workers))) / res.Seconds / targetFPS
			}
		}
		st := pace.MergeStats(stats...)
		rep.LatenessMaxNs, rep.LatenessMeanNs = st.LatenessMaxNs, st.LatenessMeanNs
		rep.P50JitterNs, rep.P99JitterNs = st.P50JitterNs, st.P99JitterNs
		rep.ScheduleLagMaxNs = st.LagMaxNs
		rep.Notes = append(rep.Notes, st.Notes()...)
		if rep.AchievedRatio < 0.999 && res.Stop == engine.StopDuration {
			rep.Notes = append(rep.Notes, fmt.Sprintf("the path did not keep up: %.2f %% of the target rate; %s",
				rep.AchievedRatio*100, whereTimeWent(res)))
		}
	}
	if rep.Backend.Reason != "" {
		rep.Notes = append(rep.Notes, fmt.Sprintf("backend mode %s: %s", rep.Backend.Mode, rep.Backend.Reason))
	}
	if rep.Backend.Hint != "" {
		rep.Notes = append(rep.Notes, "hint: "+rep.Backend.Hint)
	}
	rep.Environment = environment(f.iface)
	return rep
}

// startedAny reports whether any worker opened its backend.
func startedAny(res *engine.Result) bool {
	for _, w := range res.Workers {
		if w.Info.Backend != "" {
			return true
		}
	}
	return false
}

func whereTimeWent(res *engine.Result) string {
	var cpu, secs float64
	var empty uint64
	for _, w := range res.Workers {
		cpu += w.CPUSeconds
		secs += w.Seconds
		empty += w.EmptyReserves
	}
	s := fmt.Sprintf("the sender threads were busy %.0f %% of the time", 100*cpu/max(secs, 1e-9))
	if empty > 0 {
		s += fmt.Sprintf(", and found the backend full %d times (the path drains slower than the rate)", empty)
	}
	return s
}

// chooseCores turns --pin-core / --pin-cores / --auto-pin into one CPU per
// worker, or nil for no pinning.
func chooseCores(f *runFlags, allowed []int) ([]int, error) {
	switch {
	case f.pinCores != "":
		// Bounded by the allowed CPUs before a range is expanded, so that
		// 0-99999999 fails at once instead of filling memory.
		list, err := sysinfo.ParseCPUListMax(f.pinCores, slices.Max(append([]int{0}, allowed...)))
		if err != nil || len(list) == 0 {
			why := "write a list of CPUs such as 2,3 or 2-5"
			if err != nil {
				why = err.Error() + "; " + why
			}
			return nil, fmt.Errorf("--pin-cores %q: %s, from the CPUs this process may use (%s)", f.pinCores, why, formatCPUList(allowed))
		}
		seen := map[int]bool{}
		for _, c := range list {
			if seen[c] {
				return nil, fmt.Errorf("--pin-cores %s names CPU %d twice: give each worker its own CPU (allowed: %s)", f.pinCores, c, formatCPUList(allowed))
			}
			seen[c] = true
		}
		if len(list) < f.workers {
			return nil, fmt.Errorf("--pin-cores %s names %d CPUs for %d workers: name one per worker", f.pinCores, len(list), f.workers)
		}
		list = list[:f.workers]
		return list, engine.CheckCores(list, allowed)
	case f.pinCore >= 0:
		if f.workers != 1 {
			return nil, fmt.Errorf("--pin-core pins one worker, got --workers %d: use --pin-cores or --auto-pin", f.workers)
		}
		return []int{f.pinCore}, engine.CheckCores([]int{f.pinCore}, allowed)
	case f.autoPin:
		var nodeCPUs []int
		if f.iface != "" {
			nodeCPUs = sysinfo.Host.IfaceCPUs(f.iface)
		}
		return engine.AutoCores(allowed, nodeCPUs, f.workers)
	}
	return nil, nil
}

// formatCPUList writes CPUs in the kernel's list format: "0-3,8".
func formatCPUList(cpus []int) string {
	c := slices.Clone(cpus)
	slices.Sort(c)
	var b strings.Builder
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", c[i], c[j])
		} else {
			fmt.Fprintf(&b, "%d", c[i])
		}
		i = j + 1
	}
	return b.String()
}
