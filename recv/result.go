package recv

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/hist"
	"github.com/wpg-dev/wpg/pace"
)

// Result is what a receiver saw. Its JSON field names are part of wpg's
// report schema (docs/report.md).
type Result struct {
	// Schema names this format: "wpg.recv/v1".
	Schema string `json:"schema"`
	// Frames counts frames with a valid wpg signature, duplicates excluded.
	Frames uint64 `json:"frames"`
	// Bytes is the total length of those frames.
	Bytes uint64 `json:"bytes"`
	// Lost counts sequence numbers never received below the highest one
	// seen, per stream, summed (frames after the last one received cannot
	// be known; see Missing).
	Lost uint64 `json:"lost"`
	// Duplicated counts frames whose sequence number had already been seen.
	Duplicated uint64 `json:"duplicated"`
	// Reordered counts late arrivals: frames older than the highest
	// sequence number seen that filled a gap.
	Reordered uint64 `json:"reordered"`
	// OutOfWindow counts frames more than WindowSize sequence numbers
	// behind the newest of their stream: counted as late arrivals (in
	// Reordered), but a duplicate among them would go unnoticed.
	OutOfWindow uint64 `json:"out_of_window"`
	// Corrupted counts frames whose signature, header or checksum check
	// failed; CorruptedBytes is their total length.
	Corrupted      uint64 `json:"corrupted"`
	CorruptedBytes uint64 `json:"corrupted_bytes"`
	// Unsigned counts frames without a wpg signature; UnsignedBytes is
	// their total length.
	Unsigned      uint64 `json:"unsigned"`
	UnsignedBytes uint64 `json:"unsigned_bytes"`
	// WrongStream counts signed frames of streams this receiver was not
	// told to expect (a port pair's receiver: a device that delivered a
	// frame to the wrong port, or back to its sender's); they count
	// nowhere else. WrongStreamBytes is their total length.
	WrongStream      uint64 `json:"wrong_stream,omitempty"`
	WrongStreamBytes uint64 `json:"wrong_stream_bytes,omitempty"`
	// Datagrams counts, of Frames, those that are a fragmented IP
	// datagram's signed fragment (its last, where wpg's signature
	// goes): each such datagram counts once, as its sender counts it
	// (its stream's datagrams). UnsignedFragments counts, of Unsigned,
	// the IP fragments: those datagrams' other fragments. Both are 0
	// for a receiver of payload frames, or without fragments.
	Datagrams         uint64 `json:"datagrams,omitempty"`
	UnsignedFragments uint64 `json:"unsigned_fragments,omitempty"`
	// Expected is the count asked for with Options.Expect (0 = none);
	// Missing is Expected minus Frames (intact frames only: corrupted
	// ones never count toward Expected) when fewer arrived.
	Expected uint64 `json:"expected,omitempty"`
	Missing  uint64 `json:"missing,omitempty"`
	// Seconds is the time from the first to the last signed frame;
	// PPS and BPS (bits/s) are the rates over it, the bits at BPSLayer:
	// "l2" (the frames' bytes), or "l1" (CountAt: the wire's 24 bytes a
	// frame more), as every wpg report says.
	Seconds  float64 `json:"seconds"`
	PPS      float64 `json:"pps"`
	BPS      float64 `json:"bps"`
	BPSLayer string  `json:"bps_layer"`
	// Latency is the one-way latency over all streams; nil when no frame
	// carried a usable transmit timestamp.
	Latency *Latency `json:"latency,omitempty"`
	// JitterNs is RFC 3550's interarrival jitter J (ns) over every
	// stream's frames in the order they arrived (each stream's own is in
	// Streams): the smoothed mean deviation of the differences between
	// consecutive frames' transit times, J += (|D| - J) / 16. Unlike the
	// latency it needs no shared clock. 0 before two timed frames; a
	// merged result's is the receivers' weighted by their frames.
	JitterNs int64 `json:"jitter_ns,omitempty"`
	// NegativeLatency counts frames received "before" they were sent:
	// sender and receiver do not share a clock.
	NegativeLatency uint64 `json:"negative_latency,omitempty"`
	// NegativeLatencyMaxNs is the largest amount by which a frame arrived
	// "before" it was sent: the disagreement of the two clocks.
	NegativeLatencyMaxNs int64 `json:"negative_latency_max_ns,omitempty"`
	// Streams is the per-stream breakdown, by stream id.
	Streams []StreamResult `json:"streams"`
	// Backend describes the receiver (set by Run).
	Backend *backend.Info `json:"backend,omitempty"`
	// Stop says why the receive loop ended: "expect", "duration", "idle",
	// "eof" or "interrupted" (set by Run).
	Stop string `json:"stop,omitempty"`
	// Receivers is the number of receivers merged into this result
	// (Merge); 0 for the result of one receiver.
	Receivers int `json:"receivers,omitempty"`

	// lat is the histogram behind Latency (nil without samples or when
	// decoded from the plain JSON form): Merge takes percentiles from it.
	lat *hist.Hist
}

// Schema is the value of Result.Schema; it changes when a field changes
// meaning or goes away (new fields may be added within a version).
const Schema = "wpg.recv/v1"

// Latency summarises one-way latency in nanoseconds.
type Latency struct {
	Samples uint64  `json:"samples"`
	MinNs   int64   `json:"min_ns"`
	MeanNs  float64 `json:"mean_ns"`
	P50Ns   int64   `json:"p50_ns"`
	P99Ns   int64   `json:"p99_ns"`
	P999Ns  int64   `json:"p999_ns"`
	MaxNs   int64   `json:"max_ns"`
}

// StreamResult is the per-stream part of a Result.
type StreamResult struct {
	Stream      uint16 `json:"stream"`
	Frames      uint64 `json:"frames"`
	Bytes       uint64 `json:"bytes"`
	Lost        uint64 `json:"lost"`
	Duplicated  uint64 `json:"duplicated"`
	Reordered   uint64 `json:"reordered"`
	OutOfWindow uint64 `json:"out_of_window"`
	// Corrupted counts the frames that named this stream and failed a
	// check (in the result's Corrupted too, not in Frames): a stream of
	// which only corrupted frames arrived has Frames 0.
	Corrupted uint64 `json:"corrupted"`
	// NextSeq is one past the highest sequence number received.
	NextSeq uint64 `json:"next_seq"`
	// LatencyMinNs, LatencyMeanNs and LatencyMaxNs are 0 without samples.
	LatencyMinNs  int64   `json:"latency_min_ns,omitempty"`
	LatencyMeanNs float64 `json:"latency_mean_ns,omitempty"`
	LatencyMaxNs  int64   `json:"latency_max_ns,omitempty"`
	// JitterNs is the stream's RFC 3550 interarrival jitter J (ns), as
	// Result's; 0 before two timed frames.
	JitterNs int64 `json:"jitter_ns,omitempty"`
}

// Result returns the statistics so far. It allocates; call it at the end
// or for occasional progress, not per frame.
func (t *Tracker) Result() Result {
	r := Result{
		Schema:               Schema,
		Corrupted:            t.corrupted,
		CorruptedBytes:       t.corruptedBytes,
		Unsigned:             t.unsigned,
		UnsignedBytes:        t.unsignedBytes,
		WrongStream:          t.wrongStream,
		WrongStreamBytes:     t.wrongStreamBytes,
		Datagrams:            t.datagrams,
		UnsignedFragments:    t.unsignedFragments,
		NegativeLatency:      t.negLatency,
		NegativeLatencyMaxNs: t.negLatencyMax,
		JitterNs:             t.jitter.ns(),
		Streams:              make([]StreamResult, 0, len(t.order)),
	}
	for _, s := range t.order {
		sr := StreamResult{
			Stream: s.id, Frames: s.received, Bytes: s.bytes, Lost: s.lost,
			Duplicated: s.duplicated, Reordered: s.reordered, OutOfWindow: s.outOfWin,
			NextSeq: s.next,
		}
		sr.JitterNs = s.jitter.ns()
		if s.latN > 0 {
			sr.LatencyMinNs = s.latMin
			sr.LatencyMaxNs = s.latMax
			sr.LatencyMeanNs = s.latSum / float64(s.latN)
		}
		r.Frames += s.received
		r.Bytes += s.bytes
		r.Lost += s.lost
		r.Duplicated += s.duplicated
		r.Reordered += s.reordered
		r.OutOfWindow += s.outOfWin
		sr.Corrupted = t.corruptBy[s.id]
		r.Streams = append(r.Streams, sr)
	}
	for id, n := range t.corruptBy {
		if t.streams[id] == nil { // only corrupted frames of it
			r.Streams = append(r.Streams, StreamResult{Stream: id, Corrupted: n})
		}
	}
	sort.Slice(r.Streams, func(i, j int) bool { return r.Streams[i].Stream < r.Streams[j].Stream })
	if t.lastRx > t.firstRx {
		r.Seconds = float64(t.lastRx-t.firstRx) / 1e9
		r.PPS = float64(r.Frames) / r.Seconds
	}
	r.CountAt(pace.L2)
	if n := t.latency.Count(); n > 0 {
		r.Latency = latencyOf(t.latency)
		r.lat = t.latency.Clone()
	}
	return r
}

// CountAt counts the result's bit rate at layer l (BPSLayer, BPS).
func (r *Result) CountAt(l pace.Layer) {
	r.BPSLayer = l.String()
	if r.Seconds > 0 {
		r.BPS = l.Bits(r.Bytes, r.Frames) / r.Seconds
	}
}

// latencyOf summarises a latency histogram that holds samples.
func latencyOf(h *hist.Hist) *Latency {
	return &Latency{Samples: uint64(h.Count()), MinNs: h.Min(), MeanNs: h.Mean(),
		P50Ns: h.Quantile(50), P99Ns: h.Quantile(99), P999Ns: h.Quantile(99.9), MaxNs: h.Max()}
}

// OK reports whether every expected frame arrived exactly once and intact:
// nothing lost, duplicated, corrupted or missing.
func (r Result) OK() bool {
	return r.Lost == 0 && r.Duplicated == 0 && r.Corrupted == 0 && r.Missing == 0
}

// WriteTable writes r as a human-readable table.
func (r Result) WriteTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if r.Backend != nil {
		b := r.Backend
		line := b.Backend
		if b.Mode != "" {
			line += " (" + b.Mode + ")"
		}
		if b.Interface != "" {
			line += " on " + b.Interface
		}
		if b.Reason != "" {
			line += ": " + b.Reason
		}
		fmt.Fprintf(tw, "receiver\t%s\n", line)
		// Every detail the JSON report has (reads per frame on a pipe,
		// the kernel's drop counter on afpacket, …), as the sender's
		// report prints its backend's.
		keys := make([]string, 0, len(b.Details))
		for k := range b.Details {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			note := ""
			if k == "kernel_drops" && b.Details[k] != "0" {
				note = "\t(frames the receive ring had no room for: the receiver fell behind; raise --ring-bytes)"
			}
			fmt.Fprintf(tw, "  %s\t%s%s\n", k, b.Details[k], note)
		}
		if b.Hint != "" {
			fmt.Fprintf(tw, "note\t%s\n", b.Hint)
		}
		for _, a := range b.Adjusted {
			fmt.Fprintf(tw, "note\t%s\n", a)
		}
	}
	switch d := r.Datagrams; {
	case d == 0:
		fmt.Fprintf(tw, "frames\t%d\t(%s)\n", r.Frames, si(float64(r.Bytes), "B"))
	case d == r.Frames:
		// The sender counts a fragmented datagram's frames and the
		// datagram; the receiver counts the datagram, by the fragment
		// that carries the signature.
		fmt.Fprintf(tw, "datagrams\t%d\t(%s of signed last fragments: IP datagrams, each counted once by the fragment that carries the signature; compare the sender's datagrams, not its frames)\n", d, si(float64(r.Bytes), "B"))
	default:
		fmt.Fprintf(tw, "frames\t%d\t(%s; %d of them IP datagrams, each counted once by its signed last fragment; compare the sender's datagrams for those streams)\n", r.Frames, si(float64(r.Bytes), "B"), d)
	}
	if r.Expected > 0 {
		fmt.Fprintf(tw, "expected\t%d\tmissing %d\n", r.Expected, r.Missing)
	}
	fmt.Fprintf(tw, "lost\t%d\n", r.Lost)
	fmt.Fprintf(tw, "duplicated\t%d\n", r.Duplicated)
	fmt.Fprintf(tw, "reordered\t%d\n", r.Reordered)
	if r.OutOfWindow > 0 {
		fmt.Fprintf(tw, "out of window\t%d\t(late by more than %d sequence numbers: counted as reordered, not checked for duplicates)\n", r.OutOfWindow, WindowSize)
	}
	fmt.Fprintf(tw, "corrupted\t%d\n", r.Corrupted)
	if r.UnsignedFragments > 0 {
		fmt.Fprintf(tw, "without signature\t%d\t(%s, not counted above; %d of them the datagrams' other IP fragments)\n", r.Unsigned, si(float64(r.UnsignedBytes), "B"), r.UnsignedFragments)
	} else {
		fmt.Fprintf(tw, "without signature\t%d\t(%s, not counted above)\n", r.Unsigned, si(float64(r.UnsignedBytes), "B"))
	}
	if r.WrongStream > 0 {
		fmt.Fprintf(tw, "wrong stream\t%d\t(%s signed by streams not sent to this port: delivered to the wrong port, or back to their sender; not counted above)\n", r.WrongStream, si(float64(r.WrongStreamBytes), "B"))
	}
	if r.Seconds > 0 {
		fmt.Fprintf(tw, "rate\t%s\t%s (%s) over %s\n", si(r.PPS, "pps"), si(r.BPS, "bit/s"), strings.ToUpper(cmp.Or(r.BPSLayer, "l2")), time.Duration(r.Seconds*1e9).Round(time.Millisecond))
	}
	if l := r.Latency; l != nil {
		fmt.Fprintf(tw, "latency\tp50 %s\tp99 %s  p99.9 %s  max %s  (%d samples, one-way, same-host clock)\n",
			time.Duration(l.P50Ns), time.Duration(l.P99Ns), time.Duration(l.P999Ns), time.Duration(l.MaxNs), l.Samples)
	}
	if r.JitterNs > 0 {
		fmt.Fprintf(tw, "jitter\t%s\t(RFC 3550 interarrival jitter: the smoothed deviation of consecutive frames' transit times)\n", time.Duration(r.JitterNs))
	}
	if r.NegativeLatency > 0 {
		fmt.Fprintf(tw, "negative latency\t%d\t(by up to %s: the sender's and receiver's clocks disagree by that much)\n", r.NegativeLatency, time.Duration(r.NegativeLatencyMaxNs))
	}
	if r.Stop != "" {
		fmt.Fprintf(tw, "stopped by\t%s\n", r.Stop)
	}
	_ = tw.Flush()
	if len(r.Streams) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		unit := "frames"
		if r.Datagrams > 0 && r.Datagrams == r.Frames {
			unit = "datagrams" // as the line above says
		}
		fmt.Fprintf(tw, "stream\t%s\tbytes\tlost\tdup\treord\tcorr\tnext seq\tlat mean\tjitter\t\n", unit)
		for _, s := range r.Streams {
			lat, jit := "-", "-"
			if s.LatencyMeanNs > 0 {
				lat = time.Duration(math.Round(s.LatencyMeanNs)).String() // to the ns, as jitter and the latency line
			}
			if s.JitterNs > 0 {
				jit = time.Duration(s.JitterNs).String()
			}
			fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t\n", s.Stream, s.Frames, s.Bytes, s.Lost, s.Duplicated, s.Reordered, s.Corrupted, s.NextSeq, lat, jit)
		}
		_ = tw.Flush()
	}
}

// si formats v with a k/M/G prefix to unit.
func si(v float64, unit string) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.3f G%s", v/1e9, unit)
	case v >= 1e6:
		return fmt.Sprintf("%.3f M%s", v/1e6, unit)
	case v >= 1e3:
		return fmt.Sprintf("%.3f k%s", v/1e3, unit)
	}
	return fmt.Sprintf("%.0f %s", v, unit)
}
