package report

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/wpg-dev/wpg/pace"
)

// Provenance says where a report comes from: which wpg, run how, when and
// where. The client fills it (a library does not read the command line,
// the clock's zone or the host name on its own).
type Provenance struct {
	// Version is wpg's version line (wpg version).
	Version string `json:"version"`
	// CommandLine is the command as given, argv[0] first.
	CommandLine []string `json:"command_line"`
	// Start is when the run started, RFC 3339 with the zone.
	Start string `json:"start"`
	// Host is the machine's host name.
	Host string `json:"host"`
}

// MinInterval is the shortest --interval period of send and bench (recv
// has the same floor, recv.MinProgressEvery): each period is a snapshot of
// the run and a line or an intervals[] entry, so a period of nanoseconds
// would take the run's CPU and grow its report without bound.
const MinInterval = 50 * time.Millisecond

// Interval is one period of a run (iperf3-style --interval lines, and
// intervals[] in the JSON): what moved between Start and End, seconds
// since the run started. The frames and bytes of a run's intervals add up
// to its totals.
type Interval struct {
	Start  float64 `json:"start"`
	End    float64 `json:"end"`
	Frames uint64  `json:"frames"`
	Bytes  uint64  `json:"bytes"`
	// PPS and BPS are the interval's frame and bit rates (bits at the
	// report's bps_layer: Intervals.Layer).
	PPS float64 `json:"pps"`
	BPS float64 `json:"bps"`
	// LatenessP99Ns is the 99th percentile of the pacer's lateness in the
	// interval (send with --rate; 0 flat out).
	LatenessP99Ns int64 `json:"lateness_p99_ns,omitempty"`
	// Lost and Corrupted are the receiver's counts in the interval (recv,
	// and a sender's own receivers: every interval of such a run has them,
	// 0 before the receivers' first progress message). Lost can be
	// negative: a late frame fills a gap counted as lost in an earlier
	// interval. The intervals' Lost sums to the run's.
	Lost      *int64  `json:"lost,omitempty"`
	Corrupted *uint64 `json:"corrupted,omitempty"`
	// LatencyP99Ns is the 99th percentile of the one-way latency the
	// receiver measured in the interval (recv; 0 when not measured).
	LatencyP99Ns int64 `json:"latency_p99_ns,omitempty"`
	// JitterNs is the receiver's RFC 3550 interarrival jitter J at the
	// interval's end (a smoothed value: the recent frames'; 0 when not
	// measured).
	JitterNs int64 `json:"jitter_ns,omitempty"`
}

// Intervals builds a run's intervals from successive cumulative counts.
// Feed it with Add as the run goes (each call closes one interval), and
// Finish with the final totals, which closes the last interval with what
// the samples have not covered so that the intervals sum to the totals.
// The zero value is ready to use.
type Intervals struct {
	// Layer is where the intervals' bit rates count (the run's
	// --rate-layer; the zero value: l2).
	Layer         pace.Layer
	list          []Interval
	frames, bytes uint64
	lost          int64
	corrupted     uint64
	at            time.Duration
	started       bool
}

// Sample is one set of cumulative counts of a run, at Elapsed since its
// start. Lost and Corrupted are the receiver's (nil on a sender).
type Sample struct {
	Elapsed       time.Duration
	Frames, Bytes uint64
	Lost          *int64
	Corrupted     *uint64
	// LatenessP99Ns is the lateness p99 of the window since the previous
	// sample (the caller computes it: job.Snapshot.LatenessSince).
	LatenessP99Ns int64
	// LatencyP99Ns is the receiver's one-way latency p99 of the window
	// since the previous sample (recv.Progress.Latency).
	LatencyP99Ns int64
	// JitterNs is the receiver's interarrival jitter at the sample
	// (recv.Progress.JitterNs).
	JitterNs int64
}

// Add closes the interval that ends at s and returns it. A sample that
// does not advance the time returns ok false and is ignored.
func (iv *Intervals) Add(s Sample) (Interval, bool) {
	if s.Elapsed <= iv.at && iv.started {
		return Interval{}, false
	}
	iv.started = true
	in := Interval{Start: iv.at.Seconds(), End: s.Elapsed.Seconds(), LatenessP99Ns: s.LatenessP99Ns, LatencyP99Ns: s.LatencyP99Ns, JitterNs: s.JitterNs}
	if s.Frames < iv.frames || s.Bytes < iv.bytes {
		return Interval{}, false // counts never go down: not a later sample
	}
	in.Frames = s.Frames - iv.frames
	in.Bytes = s.Bytes - iv.bytes
	if s.Lost != nil {
		d := *s.Lost - iv.lost
		in.Lost = &d
		iv.lost = *s.Lost
	}
	if s.Corrupted != nil {
		d := *s.Corrupted - min(*s.Corrupted, iv.corrupted)
		in.Corrupted = &d
		iv.corrupted = *s.Corrupted
	}
	if dt := in.End - in.Start; dt > 0 {
		in.PPS = float64(in.Frames) / dt
		in.BPS = iv.Layer.Bits(in.Bytes, in.Frames) / dt
	}
	iv.frames, iv.bytes = s.Frames, s.Bytes
	iv.at = s.Elapsed
	iv.list = append(iv.list, in)
	return in, true
}

// Finish closes the last interval at the run's end with its totals (the
// report's frames and bytes, and the receiver's lost and corrupted) and
// returns every interval, which then sum to the totals. When the run
// ended at the last sample, what is left goes into the last interval; a
// total below what the samples saw (none in a consistent run) is taken
// back from it.
func (iv *Intervals) Finish(total Sample) []Interval {
	if _, ok := iv.Add(total); ok {
		return iv.list
	}
	n := len(iv.list)
	if n == 0 {
		return iv.add0(total)
	}
	last := &iv.list[n-1]
	if total.JitterNs > 0 {
		last.JitterNs = total.JitterNs
	}
	last.Frames = last.Frames + total.Frames - iv.frames
	last.Bytes = last.Bytes + total.Bytes - iv.bytes
	iv.frames, iv.bytes = total.Frames, total.Bytes
	if total.Lost != nil && last.Lost != nil {
		d := *last.Lost + *total.Lost - iv.lost
		last.Lost, iv.lost = &d, *total.Lost
	}
	if total.Corrupted != nil && last.Corrupted != nil {
		d := *last.Corrupted + *total.Corrupted - iv.corrupted
		last.Corrupted, iv.corrupted = &d, *total.Corrupted
	}
	if dt := last.End - last.Start; dt > 0 {
		last.PPS = float64(last.Frames) / dt
		last.BPS = iv.Layer.Bits(last.Bytes, last.Frames) / dt
	}
	return iv.list
}

// add0 is Finish of a run that took no time: one empty-span interval.
func (iv *Intervals) add0(total Sample) []Interval {
	in := Interval{Frames: total.Frames, Bytes: total.Bytes, Lost: total.Lost, Corrupted: total.Corrupted, JitterNs: total.JitterNs}
	iv.list = append(iv.list, in)
	iv.frames, iv.bytes, iv.started = total.Frames, total.Bytes, true
	return iv.list
}

// List returns the intervals closed so far.
func (iv *Intervals) List() []Interval { return iv.list }

// WriteIntervalLine writes one interval as a line of text: time span,
// frames, rate, and the lateness p99 or the receiver's loss when known.
func WriteIntervalLine(w io.Writer, in Interval) {
	s := fmt.Sprintf("[%6.2f-%6.2f s] %12d frames  %s pps  %s", in.Start, in.End, in.Frames, SI(in.PPS, ""), SI(in.BPS, "bit/s"))
	if in.LatenessP99Ns > 0 {
		s += "  lateness p99 " + Dur(in.LatenessP99Ns)
	}
	if in.Lost != nil {
		s += fmt.Sprintf("  lost %d", *in.Lost)
	}
	if in.LatencyP99Ns > 0 {
		s += "  latency p99 " + Dur(in.LatencyP99Ns)
	}
	if in.JitterNs > 0 {
		s += "  jitter " + Dur(in.JitterNs)
	}
	if in.Corrupted != nil && *in.Corrupted > 0 {
		s += fmt.Sprintf("  corrupted %d", *in.Corrupted)
	}
	fmt.Fprintln(w, s)
}

// Repeats summarises the runs of a repeated measurement (bench --repeat):
// the median frame rate and its range.
type Repeats struct {
	Runs      int     `json:"runs"`
	MedianPPS float64 `json:"median_pps"`
	MinPPS    float64 `json:"min_pps"`
	MaxPPS    float64 `json:"max_pps"`
	// Spread is (MaxPPS − MinPPS) / MedianPPS.
	Spread float64   `json:"spread"`
	PPS    []float64 `json:"pps"`
}

// RepeatsOf summarises the frame rates of repeated runs (nil for none).
func RepeatsOf(pps []float64) *Repeats {
	if len(pps) == 0 {
		return nil
	}
	s := slices.Clone(pps)
	slices.Sort(s)
	r := &Repeats{Runs: len(s), MinPPS: s[0], MaxPPS: s[len(s)-1], PPS: slices.Clone(pps)}
	if n := len(s); n%2 == 1 {
		r.MedianPPS = s[n/2]
	} else {
		r.MedianPPS = (s[n/2-1] + s[n/2]) / 2
	}
	if r.MedianPPS > 0 {
		r.Spread = (r.MaxPPS - r.MinPPS) / r.MedianPPS
	}
	return r
}
