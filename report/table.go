package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/printable"
)

// WriteTable writes r as a human-readable table.
func (r *Report) WriteTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, format string, a ...any) { fmt.Fprintf(tw, "%s\t%s\n", k, fmt.Sprintf(format, a...)) }
	title := "wpg " + r.Command
	if r.Template != "" {
		title += " " + printable.Escape(r.Template)
	}
	fmt.Fprintln(tw, title)
	mode := r.Backend.Mode
	if r.Backend.Reason != "" {
		mode += " (" + r.Backend.Reason + ")"
	}
	be := r.Backend.Backend
	if r.Backend.Interface != "" {
		be += " on " + r.Backend.Interface
	}
	row("backend", "%s, mode %s", be, mode)
	if r.Backend.RingDepth > 0 {
		row("ring depth", "%d (effective)", r.Backend.RingDepth)
	}
	switch {
	case r.Backend.NUMANode >= 0:
		row("NUMA node", "%d", r.Backend.NUMANode)
	case r.Backend.Interface != "":
		row("NUMA node", "unknown (%s reports none: virtual device or one-node machine)", r.Backend.Interface)
	}
	for _, k := range sortedKeys(r.Backend.Details) {
		row("  "+k, "%s", r.Backend.Details[k])
	}
	plan := r.Plan
	if r.PlanDetail != "" {
		plan += " (" + printable.Escape(r.PlanDetail) + ")" // holds stream names
	}
	row("plan", "%s", plan)
	if r.Segment != "" {
		row("segment", "%s of job %s", r.Segment, r.Job)
	}
	if len(r.Inputs) > 0 {
		var names []string
		for _, in := range r.Inputs {
			if in.Segment != "" {
				names = append(names, in.Segment)
			} else {
				names = append(names, in.File)
			}
		}
		row("merged", "%d reports of job %s: %s", len(r.Inputs), r.Job, printable.Escape(strings.Join(names, ", ")))
	}
	row("workers", "%d, batch %d", len(r.Workers), r.Batch)
	row("frames", "%d (%.1f bytes mean)", r.Frames, r.FrameSize)
	if r.Payload {
		row("bytes", "%d (%d of payload)", r.Bytes, r.PayloadBytes)
	} else {
		row("bytes", "%d", r.Bytes)
	}
	row("seconds", "%.3f", r.Seconds)
	if r.Payload {
		row("rate", "%s frames/s, %s of payload", SI(r.PPS, ""), SI(r.PayloadBytesPerSecond, "B/s"))
	} else {
		row("rate", "%s pps, %s (%s)", SI(r.PPS, ""), SI(r.BPS, "bit/s"), layerLabel(r.BPSLayer))
	}
	if r.Rate != "" {
		row("target", "%s = %s pps, achieved %.2f %% (wait %s)", r.Rate, SI(r.TargetPPS, ""), r.AchievedRatio*100, r.Wait)
		if r.WakeBoost != "" {
			row("wake boost", "%s", r.WakeBoost)
		}
		row("lateness", "max %s, mean %s, p50 %s, p99 %s", Dur(r.LatenessMaxNs), Dur(r.LatenessMeanNs), Dur(r.LatenessP50Ns), Dur(r.LatenessP99Ns))
		if r.ScheduleLagMaxNs > 0 {
			row("schedule lag", "max %s behind", Dur(r.ScheduleLagMaxNs))
		}
	}
	if p := r.Repeats; p != nil {
		row("repeats", "%d runs: median %s pps (%s – %s, spread %.0f %%); the other rows are the last run's", p.Runs, SI(p.MedianPPS, ""), SI(p.MinPPS, ""), SI(p.MaxPPS, ""), p.Spread*100)
	}
	row("clock", "%s", r.Clock)
	row("cpu", "%.2f s (%.2f of a core)", r.CPUSeconds, safeDiv(r.CPUSeconds, r.Seconds))
	row("stop", "%s", r.Stop)
	if len(r.Workers) > 1 {
		for _, wk := range r.Workers {
			cpu := "unpinned"
			if wk.CPU >= 0 {
				cpu = fmt.Sprintf("cpu %d", wk.CPU)
			}
			if wk.Segment != "" {
				cpu += ", " + printable.Escape(wk.Segment)
			}
			row(fmt.Sprintf("  worker %d", wk.Worker), "%s pps, %d frames, %s", SI(wk.PPS, ""), wk.Frames, cpu)
		}
	}
	if len(r.Streams) > 1 || (len(r.Streams) == 1 && r.Streams[0].Rate != "") {
		for _, st := range r.Streams {
			line := fmt.Sprintf("%d frames", st.Frames)
			if st.Datagrams > 0 {
				line += fmt.Sprintf(" (%d whole datagram%s)", st.Datagrams, plural(st.Datagrams))
			}
			if st.Bytes > 0 {
				line += fmt.Sprintf(", %s pps, %s", SI(st.PPS, ""), SI(st.BPS, "bit/s"))
			}
			for _, x := range []string{st.Rate, st.Mode} {
				if x != "" {
					line += ", " + x
				}
			}
			if st.DelayNs > 0 {
				line += ", delay " + Dur(st.DelayNs)
			}
			if st.LatenessMaxNs != nil && st.LatenessMeanNs != nil {
				line += fmt.Sprintf(", late max %s, mean %s", Dur(*st.LatenessMaxNs), Dur(*st.LatenessMeanNs))
			}
			row(fmt.Sprintf("  stream %d", st.Stream), "%s: %s", printable.Escape(st.Name), line)
		}
	}
	for _, p := range r.Ports {
		line := p.Interface
		if p.Netns != "" {
			line += " (netns " + printable.Escape(p.Netns) + ")"
		}
		if p.MAC != "" {
			line += " " + p.MAC
		}
		if p.Address != "" {
			line += ", " + p.Address
		}
		if p.Gateway != "" {
			line += " via " + p.Gateway
			if p.GatewayMAC != "" {
				line += " at " + p.GatewayMAC
			}
		}
		if len(p.VLANTags) > 0 {
			tags := make([]string, len(p.VLANTags))
			for i, t := range p.VLANTags {
				tags[i] = t.String()
			}
			line += "; tagged " + strings.Join(tags, " + ")
		}
		switch {
		case p.Kernel:
			line += "; the kernel answers for the address"
		case p.Address != "":
			line += fmt.Sprintf("; answered %d request%s for it", p.Answered, plural(p.Answered))
		}
		row("port "+p.Role, "%s", printable.Escape(line))
	}
	switch {
	case len(r.Directions) > 1:
		for _, d := range r.Directions {
			row(d.Direction, "%s → %s: sent %d at %s pps (%s)", printable.Escape(d.From), printable.Escape(d.To), d.Frames, SI(d.PPS, ""), achievedWord(d.TargetPPS, d.AchievedRatio))
			row("  receiver", "%s", verificationLine(d.Verification))
			row("  verdict", "%s", d.Verdict)
		}
	case len(r.Verification) > 0:
		row("receiver", "%s", verificationLine(r.Verification))
		if len(r.Directions) == 1 {
			row("verdict", "%s", r.Directions[0].Verdict)
		}
	}
	if r.Verify != "" {
		row("verify", "%s", r.Verify)
	}
	for _, n := range r.Notes {
		row("note", "%s", n)
	}
	if r.Error != "" {
		row("error", "%s", r.Error)
	}
	if p := r.Provenance; p != nil {
		row("run", "%s on %s, %s", p.Start, printable.Escape(p.Host), p.Version)
	}
	tw.Flush()
}

// achievedWord says a direction's rate against its target.
func achievedWord(target, ratio float64) string {
	if target == 0 {
		return "flat out"
	}
	return fmt.Sprintf("target %s pps, achieved %.2f %%", SI(target, ""), ratio*100)
}

// layerLabel is how the table names the layer of the bit rate: "L2"
// (also for reports without one), "L1".
func layerLabel(l string) string {
	if l == "" {
		return "L2"
	}
	return strings.ToUpper(l)
}

// SI formats v with an SI prefix (k, M, G) and the unit.
func SI(v float64, unit string) string {
	abs := v
	if abs < 0 {
		abs = -abs
	}
	s := ""
	switch {
	case abs >= 1e9:
		s = fmt.Sprintf("%.3f G", v/1e9)
	case abs >= 1e6:
		s = fmt.Sprintf("%.3f M", v/1e6)
	case abs >= 1e3:
		s = fmt.Sprintf("%.3f k", v/1e3)
	default:
		s = fmt.Sprintf("%.1f ", v)
	}
	return strings.TrimSpace(s + unit)
}

// Dur formats a nanosecond count for humans.
func Dur(ns int64) string { return time.Duration(ns).String() }

func safeDiv(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// verificationLine summarises a receiver's report (package recv's Result).
func verificationLine(b []byte) string {
	var v struct {
		Frames, Lost, Duplicated, Reordered, Corrupted, Unsigned uint64
		WrongStream                                              uint64 `json:"wrong_stream"`
		Receivers                                                int
		Jitter                                                   int64 `json:"jitter_ns"`
		Latency                                                  *struct {
			P50 int64 `json:"p50_ns"`
			P99 int64 `json:"p99_ns"`
			Max int64 `json:"max_ns"`
		}
		Backend *backend.Info
		Stop    string
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return string(b)
	}
	s := ""
	if v.Receivers > 1 {
		s = fmt.Sprintf("%d receivers: ", v.Receivers)
	}
	s += fmt.Sprintf("%d frames received, %d lost, %d duplicated, %d reordered, %d corrupted", v.Frames, v.Lost, v.Duplicated, v.Reordered, v.Corrupted)
	if v.Unsigned > 0 {
		s += fmt.Sprintf(", %d without signature", v.Unsigned)
	}
	if v.WrongStream > 0 {
		s += fmt.Sprintf(", %d on a stream not sent to this port", v.WrongStream)
	}
	if v.Latency != nil {
		if v.Latency.P50 > 0 {
			s += fmt.Sprintf("; latency p50 %s, p99 %s,", Dur(v.Latency.P50), Dur(v.Latency.P99))
		} else {
			s += "; latency"
		}
		s += fmt.Sprintf(" max %s", Dur(v.Latency.Max))
	}
	if v.Jitter > 0 {
		s += fmt.Sprintf("; jitter %s", Dur(v.Jitter))
	}
	if v.Backend != nil {
		s += "; " + v.Backend.Mode
		for _, k := range sortedKeys(v.Backend.Details) {
			s += fmt.Sprintf(", %s %s", k, v.Backend.Details[k])
		}
	}
	return s
}

// plural is "s" unless n is 1.
func plural(n uint64) string {
	if n == 1 {
		return ""
	}
	return "s"
}
