package template

import (
	"errors"
	"fmt"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/frame/pcapread"
	"github.com/wpg-dev/wpg/internal/printable"
)

// Segments (CompileOptions.Segment, Segments; wpg send --segment I/N)
// split one job over N senders, each with its own W workers, so that the
// N together send exactly the frames of one unsegmented run of W workers.
//
// Worker w of W in an unsegmented run sends the packets k ≡ w (mod W) of
// every stream, in order: its m-th packet of a stream is k = w + m·W.
// Segment i of N deals those out: worker w of segment i sends the m-th
// packets with m ≡ i (mod N), k ≡ w + W·i (mod W·N). So each (segment,
// worker) sends one residue class of k modulo W·N in order, and the
// signature names W·N senders: one receiver checks the order of every
// class (recv: per stream and k mod workers) and takes the interleaving
// of the classes, whichever sender sent them, for what it is. One
// segment (N = 1) is the unsegmented run, bit for bit.
//
// A stream's count splits with it: of the n packets worker w sends of a
// stream, segment i sends those m < n with m ≡ i (mod N), the remainder
// going to the lowest segments. A run's --count C is one more cap: the
// unsegmented worker w sends its share of C (the engine's split, the
// lowest workers one more), and which streams its interleaving takes
// them from follows from the streams' shares and counts (the smooth
// weighted round-robin, sched.go). segmentCaps replays that
// interleaving, without rendering, to learn how many packets of each
// stream worker w sends, and gives segment i its share of each: the
// segments' packets are then exactly the unsegmented run's, whatever C.
// Several streams that keep their own schedules (timing:) order their
// packets by due time instead; with a --count their split is refused
// (ErrSegmentCount). One such stream (a capture replayed with its
// own timing, wpg send --pcap) splits as any other.

// MaxSegmentSenders is the most senders (segments × workers) one job may
// have: the signature names them in 8 bits.
const MaxSegmentSenders = frame.MaxSignatureWorkers

// maxPickSteps bounds the interleaving segmentCaps replays (picks ×
// groups of equal share): a template whose shares make it longer is
// refused rather than planned for seconds.
const maxPickSteps = 1 << 27

// ErrSegmentCount is the error of a segmented run whose --count cannot
// be split exactly over the segments: several streams that keep their
// own schedules, or an interleaving too long to replay (maxPickSteps).
// Compile's error wraps it and says why.
var ErrSegmentCount = errors.New("--count cannot be split exactly over the segments")

// lanes returns the packet index of the first packet the source of
// o.Worker sends of every stream, and the stride between its packets:
// (Worker, Workers) for one segment, (Worker + Workers·Segment, Workers ·
// Segments) for segment Segment of Segments.
func (o *CompileOptions) lanes() (k, w int) {
	return o.Worker + o.Workers*o.Segment, o.Workers * o.Segments
}

// laneOptions is o as the streams see it: Worker and Workers are the
// lane and the stride of lanes.
func (o CompileOptions) laneOptions() CompileOptions {
	o.Worker, o.Workers = o.lanes()
	return o
}

// checkSegment checks the segment options (check has set the defaults).
func (o *CompileOptions) checkSegment(spec *Spec) error {
	if o.Segments <= 0 {
		o.Segments = 1
	}
	if o.Segment < 0 || o.Segment >= o.Segments {
		return fmt.Errorf("template: segment %d out of range 0..%d", o.Segment, o.Segments-1)
	}
	if o.Segments > 1 && o.Workers*o.Segments > MaxSegmentSenders {
		return fmt.Errorf("template: %d segments of %d workers are %d senders; the signature names at most %d", o.Segments, o.Workers, o.Segments*o.Workers, MaxSegmentSenders)
	}
	if o.Segments > 1 && o.Count > 0 && spec.Timed() && len(spec.Streams) > 1 {
		return fmt.Errorf("template %s: %w: its streams keep their own schedules (rate:, burst:, timing:) and send in the order of their due times", printable.Escape(spec.File), ErrSegmentCount)
	}
	return nil
}

// segmentCaps returns, for a segmented run with a --count, the packets
// the source of o (lane options not applied) sends of each stream (for a
// fragmented stream, its fragments), or nil when the streams' own counts
// and the lanes say it all (one segment, or no --count).
func segmentCaps(spec *Spec, o CompileOptions) ([]uint64, error) {
	if o.Segments <= 1 || o.Count == 0 {
		return nil, nil
	}
	W, N := uint64(o.Workers), uint64(o.Segments)
	w := uint64(o.Worker)
	n := len(spec.Streams)
	shares := make([]int64, n)
	left := make([]uint64, n)
	unlimited := make([]bool, n)
	per := make([]uint64, n) // fragments per datagram (1 for whole frames)
	for i := range spec.Streams {
		st := &spec.Streams[i]
		shares[i], per[i] = int64(st.Share), 1
		count := st.Count
		if st.Replay != nil && count == 0 {
			recs, err := replayRecords(st, i)
			if err != nil {
				return nil, err
			}
			count = recs // one pass of the capture
		} else if f := newFragger(st); f != nil {
			per[i] = uint64(f.g.count)
		}
		switch {
		case count == 0:
			unlimited[i] = true
		case count > w:
			left[i] = (count - w + W - 1) / W * per[i]
		}
	}
	// The unsegmented worker's share of --count, as the engine splits it.
	c := o.Count / W
	if w < o.Count%W {
		c++
	}
	picks, err := pickCounts(shares, left, unlimited, c)
	if err != nil {
		return nil, fmt.Errorf("template %s: --count %d over %d segments: %w", printable.Escape(spec.File), o.Count, N, err)
	}
	// Segment i's share of each stream: the datagrams m ≡ i (mod N) of
	// those the unsegmented worker sends, and of a datagram it sends in
	// part, the fragments it sends.
	caps := make([]uint64, n)
	i := uint64(o.Segment)
	for j, p := range picks {
		d, r := p/per[j], p%per[j]
		if d > i {
			caps[j] = (d - i + N - 1) / N * per[j]
		}
		if r > 0 && d%N == i {
			caps[j] += r
		}
	}
	return caps, nil
}

// replayRecords is the number of records of the capture stream i replays.
func replayRecords(st *Stream, i int) (uint64, error) {
	rp := st.Replay
	if rp.summary == nil {
		sum, err := pcapread.Scan(rp.File)
		if err != nil {
			return 0, fmt.Errorf("stream %d (%s): %w", i, printable.Escape(st.Name), err)
		}
		rp.summary = &sum
	}
	return rp.summary.Records, nil
}

// pickCounts replays the interleaving of a source's streams (shares;
// left packets, or unlimited) for c picks, as Source.Render makes them,
// and returns how many packets of each stream it takes. Each run of
// picks between two streams running out starts from zero weights and
// repeats every sum(shares) picks, each stream taken share times a
// period: whole periods are counted, not replayed.
func pickCounts(shares []int64, left []uint64, unlimited []bool, c uint64) ([]uint64, error) {
	got := make([]uint64, len(shares))
	rem := append([]uint64(nil), left...)
	var active []int
	for i := range shares {
		if unlimited[i] || rem[i] > 0 {
			active = append(active, i)
		}
	}
	steps := 0
	for c > 0 && len(active) > 0 {
		var total uint64
		for _, i := range active {
			total += uint64(shares[i])
		}
		// Whole periods before the count ends or a stream runs out.
		q := c / total
		for _, i := range active {
			if !unlimited[i] {
				q = min(q, (rem[i]-1)/uint64(shares[i]))
			}
		}
		for _, i := range active {
			got[i] += q * uint64(shares[i])
			if !unlimited[i] {
				rem[i] -= q * uint64(shares[i])
			}
		}
		c -= q * total
		// Then pick by pick, until the count ends or a stream runs out
		// (within one period).
		rr := newSWRR(active, func(i int) int64 { return shares[i] })
		for c > 0 {
			if steps += len(rr.groups); steps > maxPickSteps {
				return nil, fmt.Errorf("%w: splitting it exactly replays more than %d steps of the streams' interleaving (their shares add up to %d)", ErrSegmentCount, maxPickSteps, total)
			}
			i := rr.next()
			got[i]++
			c--
			if !unlimited[i] {
				if rem[i]--; rem[i] == 0 {
					active = remove(active, i)
					break
				}
			}
		}
	}
	return got, nil
}

// remove returns list without v.
func remove(list []int, v int) []int {
	for j, a := range list {
		if a == v {
			return append(list[:j], list[j+1:]...)
		}
	}
	return list
}

// SegmentFrames returns the packets (fragments counted) that the
// o.Workers workers of o's segment send together, and false when a
// stream sends until the run is stopped (no count): what the segment has
// to do. A segment of a --count, or of streams' counts, smaller than the
// segments may have nothing (wpg send --count 2 --segment 2/3).
func SegmentFrames(spec *Spec, o CompileOptions) (uint64, bool, error) {
	if err := o.check(spec); err != nil {
		return 0, false, err
	}
	var total uint64
	for w := range o.Workers {
		wo := o
		wo.Worker = w
		caps, err := segmentCaps(spec, wo)
		if err != nil {
			return 0, false, err
		}
		if caps != nil {
			for _, c := range caps {
				total += c
			}
			continue
		}
		lo := wo.laneOptions()
		for i := range spec.Streams {
			st := &spec.Streams[i]
			count := st.Count
			if st.Replay != nil && count == 0 {
				if count, err = replayRecords(st, i); err != nil {
					return 0, false, err
				}
			}
			if count == 0 {
				return 0, false, nil
			}
			k, W := uint64(lo.Worker), uint64(lo.Workers)
			if count > k {
				n := (count - k + W - 1) / W
				if f := newFragger(st); f != nil && st.Replay == nil {
					n *= uint64(f.g.count)
				}
				total += n
			}
		}
	}
	if o.Count > 0 && o.Segments <= 1 { // the engine's --count caps one segment
		total = min(total, o.Count)
	}
	return total, true, nil
}
