package recv

import (
	"math"

	"github.com/wpg-dev/wpg/internal/hist"

	"github.com/wpg-dev/wpg/frame"
)

// WindowSize is the number of sequence numbers, per stream, behind the
// highest one seen for which the Tracker can still tell a duplicate from a
// late (reordered) arrival: 2 KiB of bitmap per stream. A frame older than
// that is taken for a late arrival (it fills a gap, so lost goes down by
// one) and also counted in Result.OutOfWindow, since whether it was a
// duplicate cannot be checked. Several sender workers each keep their
// share of a stream in order, but drift apart by up to a few thousand
// frames at high rates.
const WindowSize = 16384

const windowWords = WindowSize / 64

// Latency histogram range: 1 ns to the largest int64, every positive
// transit a receiver can compute (package hist: 3 significant digits,
// some 54,000 buckets, 430 KiB). A frame's transmit time can be anything
// its sender wrote: a capture replayed later keeps the old ones, and its
// frames arrive minutes or days "late"; a 100 s range read 100 s for
// them. Negative transits are counted apart (NegativeLatency).
const (
	latencyMinNs = 1
	latencyMaxNs = math.MaxInt64
)

// stream is the state of one stream.
type stream struct {
	id         uint16
	received   uint64
	bytes      uint64
	lost       uint64
	duplicated uint64
	reordered  uint64
	outOfWin   uint64
	next       uint64 // one past the highest sequence number seen
	// workers is the sender's worker count from the first signature
	// (1 … 256); with more than one, laneNext[j] is one past the highest
	// index m seen of worker j's share (sequence numbers m*workers + j).
	workers  int
	laneNext []uint64
	latN     uint64
	latSum   float64
	latMin   int64
	latMax   int64
	jitter   jitter
	// seen is a circular bitmap: bit (seq % WindowSize) is set when seq,
	// within [next-WindowSize, next), has been received.
	seen [windowWords]uint64
}

// Tracker accumulates receive statistics. It is not safe for concurrent
// use: one receive loop owns it.
type Tracker struct {
	streams [1 << 16]*stream
	order   []*stream // streams in order of first sight

	corrupted      uint64
	corruptedBytes uint64
	// corruptBy counts the corrupted frames of each stream a corrupted
	// frame named (its signature or header parsed), so that a stream of
	// which only corrupted frames arrived is listed too.
	corruptBy     map[uint16]uint64
	unsigned      uint64
	unsignedBytes uint64
	// datagrams and unsignedFragments count IP fragments (Run with
	// Options.IPFragments): signed frames that are a fragmented
	// datagram's signed fragment, and frames without a signature that
	// are fragments (its other fragments).
	datagrams         uint64
	unsignedFragments uint64

	// accept, when set, holds the streams expected here: a signed frame
	// of another counts in wrongStream only (a device that sent a frame
	// to the wrong port, or back where it came from).
	accept           *StreamSet
	wrongStream      uint64
	wrongStreamBytes uint64

	received        uint64 // sum of the streams' received
	firstRx, lastRx int64
	latency         *hist.Hist
	jitter          jitter // over every stream's frames, in arrival order
	negLatency      uint64
	negLatencyMax   int64 // largest |rx - tx| of the negative ones
}

// NewTracker returns an empty Tracker.
func NewTracker() *Tracker {
	return &Tracker{
		latency: hist.New(latencyMinNs, latencyMaxNs),
	}
}

// Observe records one frame of a one-worker sender carrying a valid wpg
// signature: its stream, sequence number, transmit time txNs
// (CLOCK_MONOTONIC ns from the signature; 0 when unknown), receive time
// rxNs (CLOCK_MONOTONIC ns; 0 when unknown) and length in bytes. It is
// ObserveSignature with Workers 1.
func (t *Tracker) Observe(id uint16, seq uint64, txNs, rxNs int64, bytes int) {
	t.observe(id, seq, 1, txNs, rxNs, bytes)
}

// ObserveSignature records one frame carrying the valid wpg signature sig,
// received at rxNs (CLOCK_MONOTONIC ns; 0 when unknown), of length bytes.
//
// Sequence numbers start at 0 per stream, so a receiver that starts late
// counts the frames it missed as lost. A sender with W workers sends, per
// stream, the sequence numbers k ≡ j (mod W) from worker j, each worker in
// order but the workers interleaved at random: order is checked within each
// worker's share, so that the interleaving is not taken for reordering. A
// frame whose sequence number is below the highest seen of its worker's
// share is a duplicate if already seen, otherwise a reordered late arrival
// that removes one from the lost count. A frame whose worker count differs
// from the one its stream started with is not from that sender: it is
// counted as corrupted.
func (t *Tracker) ObserveSignature(sig frame.Signature, rxNs int64, bytes int) {
	t.observe(sig.Stream, sig.Seq, sig.Workers, sig.TxNs, rxNs, bytes)
}

func (t *Tracker) observe(id uint16, seq uint64, workers int, txNs, rxNs int64, bytes int) {
	if t.accept != nil && !t.accept.Has(id) {
		t.wrongStream++
		t.wrongStreamBytes += uint64(bytes)
		return
	}
	workers = max(1, min(workers, frame.MaxSignatureWorkers))
	s := t.streams[id]
	if s == nil {
		s = &stream{id: id, latMin: math.MaxInt64, workers: workers}
		if workers > 1 {
			s.laneNext = make([]uint64, workers)
		}
		t.streams[id] = s
		t.order = append(t.order, s)
	} else if workers != s.workers {
		t.CorruptStream(id, bytes)
		return
	}
	if rxNs != 0 {
		if t.firstRx == 0 {
			t.firstRx = rxNs
		}
		t.lastRx = rxNs
	}
	// The frame's position in its worker's share (all of the stream with
	// one worker) and one past the highest position seen there.
	m, laneNext := seq, s.next
	if workers > 1 {
		m = seq / uint64(workers)
		laneNext = s.laneNext[seq%uint64(workers)]
	}
	switch {
	case m >= laneNext:
		s.lost += m - laneNext
		if workers > 1 {
			s.laneNext[seq%uint64(workers)] = m + 1
		}
		if seq >= s.next {
			s.advance(seq)
		} else if s.next-seq <= WindowSize {
			s.mark(seq)
		}
	case s.next-seq > WindowSize:
		// Too old to check for a duplicate: taken as a late arrival.
		s.outOfWin++
		s.reordered++
		if s.lost > 0 {
			s.lost--
		}
	default:
		w, b := (seq%WindowSize)/64, seq%64
		if s.seen[w]&(1<<b) != 0 {
			s.duplicated++
			return
		}
		s.seen[w] |= 1 << b
		s.reordered++
		if s.lost > 0 {
			s.lost--
		}
	}
	s.received++
	t.received++
	s.bytes += uint64(bytes)
	if txNs != 0 && rxNs != 0 {
		d := rxNs - txNs
		// Interarrival jitter takes differences of transit times, so it
		// holds whatever the clocks' offset: a negative transit counts.
		s.jitter.add(d)
		t.jitter.add(d)
		if d < 0 {
			t.negLatency++
			t.negLatencyMax = max(t.negLatencyMax, -d)
			return
		}
		t.latency.Record(d)
		s.latN++
		s.latSum += float64(d)
		s.latMin = min(s.latMin, d)
		s.latMax = max(s.latMax, d)
	}
}

// jitter is RFC 3550's interarrival jitter (section 6.4.1, A.8): J, the
// smoothed mean deviation of the difference D between the transit times
// (receive time less the signature's transmit time) of two frames in the
// order they arrived, J += (|D| - J) / 16. Duplicates do not count (they
// are not received anew), late arrivals do, in their place in time.
type jitter struct {
	j    float64 // ns
	last int64   // the previous frame's transit, ns
	n    uint64  // transits seen
}

// add takes the transit time of the next frame to arrive.
func (j *jitter) add(transit int64) {
	if j.n > 0 {
		d := transit - j.last
		if d < 0 {
			d = -d
		}
		j.j += (float64(d) - j.j) / 16
	}
	j.last = transit
	j.n++
}

// ns is J in nanoseconds, 0 before two transits.
func (j *jitter) ns() int64 {
	if j.n < 2 {
		return 0
	}
	return int64(math.Round(j.j))
}

// mark records seq, within the window below next, as seen.
func (s *stream) mark(seq uint64) {
	s.seen[(seq%WindowSize)/64] |= 1 << (seq % 64)
}

// advance moves the window so that seq is the highest sequence number seen,
// clearing the bits of the sequence numbers it skips, and marks seq.
func (s *stream) advance(seq uint64) {
	if seq-s.next >= WindowSize {
		s.seen = [windowWords]uint64{}
	} else {
		for q := s.next; q < seq; {
			w, b := (q%WindowSize)/64, q%64
			if b == 0 && seq-q >= 64 {
				s.seen[w] = 0
				q += 64
				continue
			}
			s.seen[w] &^= 1 << b
			q++
		}
	}
	w, b := (seq%WindowSize)/64, seq%64
	s.seen[w] |= 1 << b
	s.next = seq + 1
}

// StreamSet is a set of stream ids (8 KiB: a bit per id).
type StreamSet [1 << 16 / 64]uint64

// Add puts stream id into the set.
func (s *StreamSet) Add(id uint16) { s[id/64] |= 1 << (id % 64) }

// Has reports whether stream id is in the set.
func (s *StreamSet) Has(id uint16) bool { return s[id/64]&(1<<(id%64)) != 0 }

// Expect makes the tracker count only the frames of the streams in set:
// a signed frame of any other stream is counted apart
// (Result.WrongStream), as a device under test that delivered it to the
// wrong port. nil counts every stream.
func (t *Tracker) Expect(set *StreamSet) { t.accept = set }

// Corrupt counts a frame that carried a wpg signature or header whose check
// failed (a bad checksum, a header that does not parse).
func (t *Tracker) Corrupt(bytes int) {
	t.corrupted++
	t.corruptedBytes += uint64(bytes)
}

// CorruptStream counts, as Corrupt, a corrupted frame whose signature or
// header names stream id, and counts it for that stream too (a stream not
// expected here, Expect, only in the total): the stream is listed in the
// result even when no intact frame of it arrived.
func (t *Tracker) CorruptStream(id uint16, bytes int) {
	t.Corrupt(bytes)
	if t.accept != nil && !t.accept.Has(id) {
		return
	}
	if t.corruptBy == nil {
		t.corruptBy = map[uint16]uint64{}
	}
	t.corruptBy[id]++
}

// Unsigned counts a frame without the wpg signature (other traffic on the
// interface, or frames sent without a signature).
func (t *Tracker) Unsigned(bytes int) {
	t.unsigned++
	t.unsignedBytes += uint64(bytes)
}

// Frames returns the number of frames with a valid signature seen so far,
// duplicates excluded.
func (t *Tracker) Frames() uint64 { return t.received }
