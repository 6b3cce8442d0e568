package job

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/wpg-dev/wpg/engine"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/pace"
	"github.com/wpg-dev/wpg/recv"
	"github.com/wpg-dev/wpg/report"
	"github.com/wpg-dev/wpg/sysinfo"
	"github.com/wpg-dev/wpg/template"
)

// noCarrierNote says that frames "sent" went nowhere: the interface was
// up but had no carrier (a cable out, a veth whose peer is down), so the
// device dropped what it was given, and the report's figures are those of
// the sender alone (100,000 frames sent, none on any wire).
func noCarrierNote(ifc *sysinfo.Iface, frames uint64) string {
	if ifc == nil || frames == 0 {
		return ""
	}
	switch ifc.Operstate {
	case "down", "lowerlayerdown":
	default:
		return ""
	}
	return fmt.Sprintf("%s has no carrier (operstate %s: a cable out, or a veth whose peer is down): the device dropped the frames it was handed; `ip link show %s` says NO-CARRIER", ifc.Name, ifc.Operstate, ifc.Name)
}

// scheduledTarget sets the target and the achieved share of a run whose
// streams keep their own schedules: the frames the timetable had due over
// the run, over its length, or over the timetable's own length when the
// run outlasted it (every frame sent, the last one late or not). The
// streams' long-run rate together counts streams that sent their counts
// long before the end as if they were still sending: 5 bursts of 20
// frames at 50 kpps and 1000 frames at 2 kpps, all on time, were
// "achieved 14.63 %" of a 15.7 kpps target, and failed --fail-under.
func scheduledTarget(rep *report.Report, sc template.Schedule, seconds float64) {
	ns := seconds * 1e9
	if end := sc.End(); end >= 0 && end < ns {
		ns = end
	}
	due := sc.DueBy(ns)
	if !(ns > 0) || !(due > 0) {
		// No time to measure (a single frame, or every frame due at
		// once): against the long-run rate, as for --rate.
		if rep.TargetPPS > 0 {
			rep.AchievedRatio = rep.PPS / rep.TargetPPS
		}
		return
	}
	rep.TargetPPS = due * 1e9 / ns
	rep.AchievedRatio = rep.PPS / rep.TargetPPS
}

// captureTimingNote explains a replay with a capture's own timing that
// the path could not keep: a capture of a flat-out run (wpg's pcapfile
// backend, a generator's output) has records nanoseconds apart, and
// replaying it read "target 3.9 G pps, achieved 0.00 %" with no word of
// why or what to do. The note gives the capture's pace, what the path
// sent, how far behind it fell, and the settings that replay it at a
// pace the path keeps. It is empty when the run kept 90 % of the pace or
// more, or no stream replays a capture with its own timing.
func captureTimingNote(rep *report.Report, spec *template.Spec, s Spec) string {
	if spec == nil || !(rep.TargetPPS > 0) || !(rep.AchievedRatio < 0.9) || rep.Frames == 0 {
		return ""
	}
	original := false
	for i := range spec.Streams {
		if t := spec.Streams[i].Timing; t != nil && t.Original {
			original = true
		}
	}
	if !original {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the capture's own timing asks for %s pps (a record every %s on average), and this path sent %s pps: it kept ",
		report.SI(rep.TargetPPS, ""), gapWord(1e9/rep.TargetPPS), report.SI(rep.PPS, ""))
	if r := rep.AchievedRatio; r >= 0.01 {
		fmt.Fprintf(&b, "%.1f %%", r*100)
	} else {
		fmt.Fprintf(&b, "1/%.0f", 1/max(r, 1e-12))
	}
	b.WriteString(" of that pace")
	if rep.LatenessMaxNs > 0 {
		fmt.Fprintf(&b, ", and frames went up to %s late", time.Duration(rep.LatenessMaxNs).Round(time.Microsecond))
	}
	// A 400 Gbit/s link carries at most this many frames of this size.
	if line := 400e9 / 8 / (max(rep.FrameSize, 60) + float64(pace.L1Overhead)); rep.TargetPPS > line {
		fmt.Fprintf(&b, "; that pace is beyond any link (400 Gbit/s carries %s pps of these frames): the capture's timestamps are a writer's, not a wire's (a generator's output, wpg's pcapfile backend)", report.SI(line, ""))
	}
	speed := s.PcapSpeed
	if speed == 0 {
		speed = 1
	}
	slower := strconv.FormatFloat(max(roundDown(0.9*speed*rep.AchievedRatio), template.MinSpeed), 'g', -1, 64)
	rate := rateWord(roundDown(0.9 * rep.PPS))
	if s.Pcap != "" {
		fmt.Fprintf(&b, "; to replay at a pace the path keeps, slow the capture (--pcap-speed %s) or give it a rate (--rate %s); to send it as fast as the path allows, --rate max", slower, rate)
	} else {
		// A template's timed streams refuse --rate: their keys say it.
		fmt.Fprintf(&b, "; to replay at a pace the path keeps, slow the capture (speed: %s in the template) or give it a rate (timing: rate and rate: %s); to send it as fast as the path allows, drop timing: and give --rate max", slower, rate)
	}
	return b.String()
}

// gapWord writes a mean gap of ns nanoseconds, fractions of one too
// (a capture of a flat-out run: 0.256 ns).
func gapWord(ns float64) string {
	if ns < 1000 {
		return strconv.FormatFloat(ns, 'g', 3, 64) + " ns"
	}
	return time.Duration(ns).Round(time.Nanosecond).String()
}

// roundDown is the largest round number (1, 2 or 5 times a power of ten)
// at or under x > 0.
func roundDown(x float64) float64 {
	if !(x > 0) {
		return 0
	}
	p := math.Pow10(int(math.Floor(math.Log10(x))))
	for _, m := range []float64{5, 2, 1} {
		if m*p <= x*(1+1e-12) {
			return m * p
		}
	}
	return p
}

// rateWord writes a frame rate as --rate takes it (5Mpps, 200kpps, 10pps).
func rateWord(pps float64) string {
	switch {
	case pps >= 1e6:
		return strconv.FormatFloat(pps/1e6, 'g', -1, 64) + "Mpps"
	case pps >= 1e3:
		return strconv.FormatFloat(pps/1e3, 'g', -1, 64) + "kpps"
	}
	return strconv.FormatFloat(max(pps, 1), 'g', -1, 64) + "pps"
}

// pacedAchieved is the share of its frames due that a run paced at
// target frames a second (split evenly over its workers) sent; d is the
// --duration it ran for (0: none). Each worker's first frame goes at
// once: N frames take (N-W)/R with W workers (a --count run), counted
// from the first grant (the run's Seconds less its Lead: 2 frames at
// 1 kpps read 84-94 % with the threads' wake-up counted), and a run
// stopped at time D had every frame due before D, and perhaps the one
// due exactly at D: either count is all of them (1 pps for 1 s sends 1 or
// 2 frames; 2 read as 199.72 % of the rate).
func pacedAchieved(res *engine.Result, target float64, d time.Duration) float64 {
	w := len(res.Workers)
	if !(res.Seconds > 0) || !(target > 0) || w == 0 {
		return 0
	}
	if res.Stop == engine.StopCount || res.Stop == engine.StopSource {
		if secs := res.Seconds - res.Lead; res.Frames > uint64(w) && secs > 0 {
			return float64(res.Frames-uint64(w)) / secs / target
		}
		return 1 // a first frame each: on time whenever it went
	}
	// The run's seconds end at the last flush, a little after the stop
	// (a signal, an error, the --duration): every frame due before the
	// stop is due, and those due up to the end may have gone as well.
	stop, end := res.Seconds, res.Seconds
	if res.Stop == engine.StopDuration && d > 0 {
		stop = min(stop, d.Seconds())
	}
	rate := target / float64(w)                   // per worker: its frame k is due at k/rate
	lo := float64(w) * math.Ceil(stop*rate)       // due before the stop
	hi := float64(w) * (math.Floor(end*rate) + 1) // due at or before the end
	switch f := float64(res.Frames); {
	case f < lo:
		return f / lo
	case f > hi:
		return f / hi
	}
	return 1
}

// buildReport turns the engine's result into the report of the run,
// notes and the outcome of its checks included. The report is the one
// `wpg send` prints, so its notes name settings by their flags, as the
// backends' notes do.
func (pr *prepared) buildReport(res *engine.Result) *report.Report {
	s := pr.spec
	rep := &report.Report{
		Schema:    report.Schema,
		Command:   s.Command,
		Template:  s.Template,
		Batch:     s.Batch,
		Frames:    res.Frames,
		Bytes:     res.Bytes,
		Seconds:   res.Seconds,
		BPSLayer:  "l2",
		Stop:      string(res.Stop),
		Clock:     pr.clock.Source(),
		TSC:       pr.clock.TSC(),
		TargetPPS: pr.targetFPS,
		Job:       pr.jobID,
	}
	if !res.Start.IsZero() {
		rep.Started = res.Start.Format(time.RFC3339Nano)
	}
	if pr.segs > 1 {
		rep.Segment = fmt.Sprintf("%d/%d", pr.seg, pr.segs)
		if s.Count > 0 && res.Stop == engine.StopSource {
			rep.Stop = string(engine.StopCount) // the segment's share of --count ended it
		}
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
	if pr.reg.Payload {
		// Local and device paths: bytes per second of payload, what
		// their users read, rather than a network bit rate.
		header := uint64(frame.PayloadHeaderLen)
		if s.Raw {
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
	var verifications []recv.Result
	for _, w := range res.Workers {
		wr := report.Worker{Worker: w.Worker, CPU: w.CPU, NUMANode: w.Info.NUMANode, Frames: w.Frames, Bytes: w.Bytes,
			Seconds: w.Seconds, CPUSeconds: w.CPUSeconds, Mode: w.Info.Mode}
		if w.Seconds > 0 {
			wr.PPS = float64(w.Frames) / w.Seconds
		}
		if w.Err != nil {
			wr.Error = w.Err.Error()
		}
		if p, ok := w.Pacer.(*pace.Pacer); ok && p != nil {
			stats = append(stats, p.Stats())
			if rep.WakeBoost == "" {
				rep.WakeBoost = p.WakeBoost()
			}
		}
		if len(w.PeerReport) > 0 {
			if v, err := recv.UnmarshalPeer(w.PeerReport); err == nil {
				wr.Verification, _ = json.Marshal(v)
				verifications = append(verifications, v)
			}
		}
		rep.CPUSeconds += w.CPUSeconds
		rep.Workers = append(rep.Workers, wr)
	}
	if len(verifications) > 0 {
		rep.Verification, _ = recv.Merge(verifications...).MarshalPeer() // with its latency histogram: reports merge exactly
	}
	rep.Streams = streamCounts(res, pr.frames.spec)
	for i := range rep.Streams {
		rep.Streams[i].SetRates(rep.Seconds, pr.layer.String())
	}
	if !pr.rate.Unlimited() || pr.frames.timed {
		rep.Rate = pr.rate.String()
		if pr.frames.timed {
			rep.Rate = "per stream" // each stream's own, in Streams
		}
		rep.Wait = pr.wait.String()
		if pr.frames.timed {
			scheduledTarget(rep, pr.frames.schedule, res.Seconds)
			if pr.segs > 1 && rep.TargetPPS > 0 {
				// The timetable is the whole job's: a segment has
				// 1/N of its frames due.
				rep.TargetPPS /= float64(pr.segs)
				rep.AchievedRatio = rep.PPS / rep.TargetPPS
			}
		} else if pr.targetFPS > 0 {
			rep.AchievedRatio = pacedAchieved(res, pr.targetFPS, s.Duration)
		}
		st := pace.MergeStats(stats...)
		rep.LatenessMaxNs, rep.LatenessMeanNs = st.LatenessMaxNs, st.LatenessMeanNs
		rep.LatenessP50Ns, rep.LatenessP99Ns = st.LatenessP50Ns, st.LatenessP99Ns
		rep.ScheduleLagMaxNs = st.LagMaxNs
		rep.LatenessHistogram, _ = st.MarshalHistogram()
		rep.Notes = append(rep.Notes, st.Notes()...)
		if pr.frames.timed {
			if n := captureTimingNote(rep, pr.frames.spec, s); n != "" {
				rep.Notes = append(rep.Notes, n)
			}
		}
		if rep.AchievedRatio < 0.999 && res.Stop == engine.StopDuration {
			rep.Notes = append(rep.Notes, shortfallNote(rep, st.Forgiven, res))
		}
	}
	if n := segmentNote(pr, res); n != "" {
		rep.Notes = append(rep.Notes, n)
	}
	if s.Count > 0 && res.Stop == engine.StopSource && res.Frames < s.Count && pr.segs == 1 {
		// --count caps the run; it loops only --pcap's own stream.
		rep.Notes = append(rep.Notes, fmt.Sprintf("the streams' own counts ended the run at %d frames, before --count %d: --count caps a run, and each stream of a template sends its count: (a replayed capture: one pass); to send more, raise count: in the template (a capture's stream loops to reach it)",
			res.Frames, s.Count))
	}
	rep.Notes = append(rep.Notes, pr.frames.notes...)
	rep.Notes = append(rep.Notes, pr.notes...)
	if rep.Backend.Reason != "" {
		rep.Notes = append(rep.Notes, fmt.Sprintf("backend mode %s: %s", rep.Backend.Mode, rep.Backend.Reason))
	}
	if rep.Backend.Hint != "" {
		rep.Notes = append(rep.Notes, "hint: "+rep.Backend.Hint)
	}
	iface := s.Interface
	if s.Netns != "" {
		iface = "" // this process's /sys shows its own namespace's interfaces, not that one's
	}
	env := sysinfo.Environment(iface)
	rep.Environment = env
	if n := noCarrierNote(env.Interface, res.Frames); n != "" {
		rep.Notes = append(rep.Notes, n)
	}

	if err := res.Err(); err != nil {
		rep.Error = err.Error()
	}
	if pr.reg.Payload {
		rep.Verify = verifyName(s.Verify)
	}
	if pr.layer == pace.L1 {
		countL1(rep)
	}
	rep.Notes = append(rep.Notes, rep.Backend.Adjusted...)
	if n := len(pr.allowed); s.Workers > n && n > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("--workers %d on %d CPUs this process may use: workers take turns on a CPU, which lowers rates and adds jitter; use --workers %d or fewer", s.Workers, n, n))
	}
	if rep.Failed = checkOutcome(s, rep); rep.Failed != nil {
		rep.Notes = append(rep.Notes, rep.Failed.Message)
	}
	return rep
}

// countL1 turns the report's bit rate into the L1 rate that rate layer l1
// asks for: every frame also takes pace.L1Overhead bytes on the wire.
func countL1(rep *report.Report) {
	rep.BPSLayer = pace.L1.String()
	if rep.Seconds > 0 {
		rep.BPS = pace.L1.Bits(rep.Bytes, rep.Frames) / rep.Seconds
	}
}

// checkOutcome returns the failed check of a finished run: the run's own
// receivers saw frames lost, duplicated, corrupted or missing, or the
// achieved rate fell under FailUnder.
func checkOutcome(s Spec, rep *report.Report) *report.CheckFailure {
	if f := report.CheckReceived(rep.Verification, rep.Frames); f != nil {
		return f
	}
	if s.FailUnder != nil && rep.TargetPPS > 0 && rep.AchievedRatio < *s.FailUnder {
		f := *s.FailUnder
		return &report.CheckFailure{Check: report.CheckRate, Message: fmt.Sprintf("rate check failed: achieved %.2f %% of the target %s, under --fail-under %g (%.2f %%)", rep.AchievedRatio*100, rep.Rate, f, f*100)}
	}
	return nil
}

// shortfallNote explains a --duration run under its target rate. When
// the intervals the schedule skipped after stalls (pace.Stats.Forgiven,
// noted on their own) account for the missing frames, the stalls are the
// cause: "the path did not keep up" blamed the path for a VM's 8 ms
// stall, its skipped 8425 intervals being all of the 7754 frames missing
// at 1 Mpps.
func shortfallNote(rep *report.Report, forgiven int64, res *engine.Result) string {
	missing := rep.TargetPPS*rep.Seconds - float64(rep.Frames)
	if forgiven > 0 && float64(forgiven) >= 0.9*missing {
		return fmt.Sprintf("%.2f %% of the target rate: the %d frame intervals the schedule skipped after stalls (above) account for the %.0f frames missing; the path kept up otherwise",
			rep.AchievedRatio*100, forgiven, max(missing, 0))
	}
	return fmt.Sprintf("the path did not keep up: %.2f %% of the target rate; %s", rep.AchievedRatio*100, whereTimeWent(res))
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
