package template

import (
	"fmt"
	"math"
	"slices"

	"github.com/wpg-dev/wpg/header"
)

// A timed Source (Spec.Timed) sends every stream on its own schedule: the
// due time of a stream's frame k follows from its rate, burst shape and
// start delay, or from the capture's own timestamps. Render then sends the
// frames in the order of their due times (the earliest first, the lower
// stream among equals), and the pacer (pace.Pacer.Follow) waits for each
// due time instead of keeping one rate.
//
// Worker i of W sends the frames k ≡ i (mod W) of every stream at the same
// due times as one worker would, so the streams' schedules do not depend
// on the number of workers.

// stime is a timed stream's schedule.
type stime struct {
	due    int64   // the next frame's due time (absolute ns), once started
	delay  float64 // ns from the start
	period float64 // ns between frames
	burstN uint64  // frames per burst, 0 = continuous
	span   float64 // ns from one burst's first frame to the next's
	orig   bool    // the capture's own timing
	speed  float64
}

// at is the due time of the stream's frame k from the start (ns).
func (t *stime) at(k uint64, rp *replay) float64 {
	switch {
	case t.orig:
		return t.delay + rp.dueNs(t.speed)
	case t.burstN > 0:
		b, j := k/t.burstN, k%t.burstN
		return t.delay + float64(b)*t.span + float64(j)*t.period
	}
	return t.delay + float64(k)*t.period
}

// timeline orders the timed streams of a Source by their next due time: a
// binary min-heap of stream indexes.
type timeline struct {
	heap    []int
	dues    []int64 // where Render writes the frames' due times (RecordDues), nil for nowhere
	origin  int64
	started bool
}

// finish completes a Source after its streams were compiled: the mean
// frame (replays and timed streams included), the timeline of a timed
// spec, and the plan's name with replays.
func (s *Source) finish(spec *Spec) {
	var sum, weight float64
	nrep := 0
	for _, cs := range s.streams {
		st := &spec.Streams[cs.id-s.base]
		mean := meanOf(&st.Size)
		if cs.rp != nil {
			nrep++
			mean = float64(cs.rp.sum.Bytes) / float64(cs.rp.sum.Records)
		}
		w := float64(st.Share)
		if t := st.Timing; t != nil {
			w = t.FramesPerSecond(mean)
			if t.Original && cs.rp != nil && cs.rp.lapNs > 0 {
				w = float64(cs.rp.sum.Records) * 1e9 / cs.rp.lapNs
			}
		}
		sum += mean * w
		weight += w
	}
	if weight > 0 {
		s.mean = sum / weight
	}
	if nrep > 0 {
		switch {
		case nrep == len(s.streams):
			s.plan = "replay"
		default:
			s.plan += fmt.Sprintf("/replay %d", nrep)
		}
	}
	if !spec.Timed() {
		return
	}
	s.tl = &timeline{}
	for _, cs := range s.streams {
		st := &spec.Streams[cs.id-s.base]
		t := st.Timing
		mean := meanOf(&st.Size)
		if cs.rp != nil {
			mean = float64(cs.rp.sum.Bytes) / float64(cs.rp.sum.Records)
		}
		tm := &stime{delay: float64(t.Delay.Nanoseconds()), orig: t.Original, speed: t.Speed}
		if !t.Original {
			tm.period = 1e9 / t.Rate.FramesPerSecond(mean, 0)
			if t.BurstFrames > 0 {
				tm.burstN = t.BurstFrames
				tm.span = float64(t.BurstFrames-1)*tm.period + float64(t.Gap.Nanoseconds())
			}
		}
		cs.tm = tm
		// The schedule the report measures the run against (Schedule).
		sp := schedStream{count: st.Count, delay: tm.delay, period: tm.period, burstN: tm.burstN, span: tm.span, per: 1}
		if cs.fr != nil {
			sp.per = float64(cs.fr.g.count) // a datagram's fragments share its due time
		}
		if cs.rp != nil {
			if sp.count == 0 {
				sp.count = cs.rp.sum.Records // one pass, as compileReplay sends
			}
			if t.Original {
				// Record k is taken as k mean gaps in: exact for the first and
				// the last record of a pass.
				sp.period = cs.rp.lapNs / float64(cs.rp.sum.Records)
			}
		}
		s.timetable = append(s.timetable, sp)
	}
	s.fps = 0
	for _, cs := range s.streams {
		st := &spec.Streams[cs.id-s.base]
		mean := meanOf(&st.Size)
		if cs.rp != nil {
			mean = float64(cs.rp.sum.Bytes) / float64(cs.rp.sum.Records)
			if st.Timing.Original && cs.rp.lapNs > 0 {
				s.fps += float64(cs.rp.sum.Records) * 1e9 / cs.rp.lapNs
				continue
			}
		}
		s.fps += st.Timing.FramesPerSecond(mean)
	}
}

// Schedule is the timetable of a timed source's streams (all workers
// together), to measure a run against: how many frames were due by a
// time, and when the last one was due.
type Schedule []schedStream

// schedStream is one stream's schedule: frame (or datagram) k is due at
// delay + k periods, or with bursts at delay + (k / burstN) spans +
// (k mod burstN) periods (ns from the start); count of them in all, 0 =
// no end; per frames each (a fragmented datagram's fragments, else 1).
type schedStream struct {
	count         uint64
	delay, period float64
	burstN        uint64
	span          float64
	per           float64
}

// Schedule returns the streams' timetable; nil when the source is not
// timed.
func (s *Source) Schedule() Schedule {
	if s.tl == nil {
		return nil
	}
	return s.timetable
}

// DueBy returns how many frames the streams had due by ns nanoseconds
// after the start (each fragment of a datagram counted).
func (sc Schedule) DueBy(ns float64) float64 {
	var n float64
	for _, st := range sc {
		n += st.dueBy(ns) * st.per
	}
	return n
}

// End returns when the last frame of all is due (ns after the start), or
// -1 when a stream has no end (no count).
func (sc Schedule) End() float64 {
	end := 0.0
	for _, st := range sc {
		if st.count == 0 {
			return -1
		}
		end = max(end, st.at(st.count-1))
	}
	return end
}

func (st *schedStream) at(k uint64) float64 {
	if st.burstN > 0 {
		return st.delay + float64(k/st.burstN)*st.span + float64(k%st.burstN)*st.period
	}
	return st.delay + float64(k)*st.period
}

func (st *schedStream) dueBy(ns float64) float64 {
	x := ns - st.delay
	if x < 0 {
		return 0
	}
	var n float64
	switch {
	case st.period <= 0 || (st.burstN > 0 && st.span <= 0):
		n = math.Inf(1) // every frame at once
	case st.burstN > 0:
		bursts := math.Floor(x / st.span)
		n = bursts*float64(st.burstN) + min(float64(st.burstN), math.Floor((x-bursts*st.span)/st.period)+1)
	default:
		n = math.Floor(x/st.period) + 1
	}
	if st.count > 0 {
		n = min(n, float64(st.count))
	}
	if math.IsInf(n, 1) {
		return 1 // an unlimited stream with no gaps: nothing to count by
	}
	return n
}

// Timed reports whether the source keeps the streams' own schedules:
// then the engine paces it by NextDue and DueBy (pace.Pacer.Follow).
func (s *Source) Timed() bool { return s.tl != nil }

// FramesPerSecond is the long-run frame rate of all streams of a timed
// source together, over all workers (0 when not timed, or when it cannot
// be told, such as a single-record capture).
func (s *Source) FramesPerSecond() float64 { return s.fps }

// Start fixes the time origin of a timed source (ns, the clock of the
// due times): each stream's first frame is due at origin plus its delay.
// The pacer calls it at its first grant; Render calls it with its own
// time if nobody did.
func (s *Source) Start(originNs int64) {
	tl := s.tl
	if tl == nil || tl.started {
		return
	}
	tl.started, tl.origin = true, originNs
	tl.heap = tl.heap[:0]
	for _, i := range s.active {
		cs := s.streams[i]
		cs.tm.due = tl.origin + int64(cs.tm.at(cs.k, cs.rp))
		tl.heap = append(tl.heap, i)
	}
	for j := len(tl.heap)/2 - 1; j >= 0; j-- {
		s.siftDown(j)
	}
}

// less orders heap entries by due time, then stream index.
func (s *Source) less(a, b int) bool {
	x, y := s.streams[s.tl.heap[a]], s.streams[s.tl.heap[b]]
	if x.tm.due != y.tm.due {
		return x.tm.due < y.tm.due
	}
	return x.id < y.id
}

func (s *Source) siftDown(j int) {
	h := s.tl.heap
	for {
		l := 2*j + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && s.less(r, l) {
			m = r
		}
		if !s.less(m, j) {
			return
		}
		h[j], h[m] = h[m], h[j]
		j = m
	}
}

// NextDue returns the due time of the next frame (absolute ns); ok is
// false when every stream has sent its frames.
func (s *Source) NextDue() (ns int64, ok bool) {
	if s.tl == nil || len(s.tl.heap) == 0 {
		return 0, false
	}
	return s.streams[s.tl.heap[0]].tm.due, true
}

// DueBy returns how many of the next frames, at most max, are due at or
// before ns. It does not allocate.
func (s *Source) DueBy(ns int64, max int) int {
	if s.tl == nil {
		return 0
	}
	return s.dueBy(0, ns, max)
}

// dueBy counts the frames due by ns of the heap's subtree at j: a node
// due later than ns has no earlier frames below it.
func (s *Source) dueBy(j int, ns int64, max int) int {
	h := s.tl.heap
	if j >= len(h) || max <= 0 {
		return 0
	}
	cs := s.streams[h[j]]
	if cs.tm.due > ns {
		return 0
	}
	n := 1
	if cs.rp == nil || !cs.tm.orig {
		// The stream's own next frames (a capture's own timing holds only
		// the next record).
		lim := uint64(max)
		if !cs.unlimited {
			lim = min(lim, cs.left)
		}
		off := float64(ns - s.tl.origin)
		for k := cs.k + cs.w; uint64(n) < lim && cs.tm.at(k, nil) <= off; k += cs.w {
			n++
		}
	}
	n = min(n, max)
	n += s.dueBy(2*j+1, ns, max-n)
	n += s.dueBy(2*j+2, ns, max-n)
	return min(n, max)
}

// RecordDues makes every later Render write the due time of frame i into
// dues[i] (dues must hold the largest batch): the engine gives it the
// timestamps a TimedSender records.
func (s *Source) RecordDues(dues []int64) {
	if s.tl != nil {
		s.tl.dues = dues
	}
}

// renderTimed renders up to len(bufs) frames in the order of their due
// times.
func (s *Source) renderTimed(bufs [][]byte, lens []int, nowNs int64) int {
	tl := s.tl
	if s.failed {
		return 0 // a replay's capture failed: Err says why
	}
	if !tl.started {
		s.Start(nowNs)
	}
	now := uint64(nowNs)
	nowSum := header.Word64Sum(now)
	n := 0
	for n < len(bufs) && len(tl.heap) > 0 && !s.failed {
		cs := s.streams[tl.heap[0]]
		if n < len(tl.dues) {
			tl.dues[n] = cs.tm.due
		}
		if late := nowNs - cs.tm.due; late > 0 { // a frame due a little later goes now: on time
			cs.late += late
			cs.lateMax = max(cs.lateMax, late)
		}
		cs.lateN++
		lens[n] = cs.renderOne(bufs[n], now, nowSum)
		done := cs.took(lens[n])
		n++
		if done {
			last := len(tl.heap) - 1
			tl.heap[0] = tl.heap[last]
			tl.heap = tl.heap[:last]
			s.siftDown(0)
			continue
		}
		if f := cs.fr; f == nil || f.j == 0 {
			// A datagram's fragments share its due time: the next is due
			// once its last fragment went (k counts the datagrams begun).
			cs.tm.due = tl.origin + int64(cs.tm.at(cs.k, cs.rp))
		}
		s.siftDown(0)
	}
	return n
}

// StreamFrames returns the frames this source rendered of each stream,
// indexed by stream (what the worker sent of it, unless the run ended
// with a send error).
func (s *Source) StreamFrames() []uint64 {
	return s.AppendStreamFrames(make([]uint64, 0, len(s.streams)))
}

// AppendStreamFrames appends StreamFrames to dst, without allocating when
// dst has room (engine.LiveStreamCounter: the worker stores them while the
// run goes). It runs on the source's goroutine.
func (s *Source) AppendStreamFrames(dst []uint64) []uint64 {
	n := len(dst)
	dst = slices.Grow(dst, len(s.streams))[:n+len(s.streams)]
	out := dst[n:] // every element is written below
	for i, cs := range s.streams {
		out[i] = cs.k / cs.w
		if f := cs.fr; f != nil && out[i] > 0 {
			// k counts the datagrams begun; the last may be cut short.
			out[i] = (out[i]-1)*uint64(f.g.count) + uint64(f.j)
			if f.j == 0 {
				out[i] += uint64(f.g.count)
			}
		}
	}
	return dst
}

// chooseCounted picks the streams whose bytes Render counts: those whose
// frames differ in length, but for the one of the largest share, whose
// bytes StreamBytes takes from the total (a template of one stream, or
// one of IMIX and some of fixed sizes, counts nothing per frame).
func (s *Source) chooseCounted() {
	var rest *cstream
	for _, cs := range s.streams {
		if cs.fixedLen() > 0 {
			continue
		}
		cs.vcount = true
		if rest == nil || cs.share > rest.share {
			rest = cs
		}
	}
	if rest != nil {
		rest.vcount = false
	}
}

// StreamBytes returns the bytes of the frames this source rendered of
// each stream, indexed by stream (StreamFrames' frames, whole), given
// rendered, the bytes of all of them (the caller's count: the engine's
// of the frames it sent, and of those a send error left unsent). A
// stream of one frame length is its frames times the length; one whose
// lengths vary counts them as rendered; the varying stream of the
// largest share has what is left of rendered.
func (s *Source) StreamBytes(rendered uint64) []uint64 {
	frames := s.StreamFrames()
	out := make([]uint64, len(s.streams))
	rest := -1
	var known uint64
	for i, cs := range s.streams {
		switch n := cs.fixedLen(); {
		case n > 0:
			out[i] = frames[i] * uint64(n)
		case cs.vcount:
			out[i] = cs.vbytes
		default:
			rest = i
			continue
		}
		known += out[i]
	}
	if rest >= 0 {
		out[rest] = rendered - min(known, rendered)
	}
	return out
}

// StreamLateness returns, for each stream with its own schedule, how late
// its frames were rendered against their due times (the batch's render
// time less the frame's due time; a frame due within the wait's
// resolution after it counts 0): how many frames, their lateness's sum
// and its largest (ns), indexed by stream, zero for a stream without
// its own schedule; nil when no stream keeps one.
func (s *Source) StreamLateness() (frames []uint64, sumNs, maxNs []int64) {
	if s.tl == nil {
		return nil, nil, nil
	}
	frames, sumNs, maxNs = make([]uint64, len(s.streams)), make([]int64, len(s.streams)), make([]int64, len(s.streams))
	for i, cs := range s.streams {
		frames[i], sumNs[i], maxNs[i] = cs.lateN, cs.late, cs.lateMax
	}
	return frames, sumNs, maxNs
}

// StreamDatagrams returns the whole datagrams this source rendered of each
// stream: StreamFrames for whole frames; for a fragmented stream the
// datagrams whose last fragment (the one with the signature, what a
// receiver counts) was rendered.
func (s *Source) StreamDatagrams() []uint64 {
	out := make([]uint64, len(s.streams))
	for i, cs := range s.streams {
		out[i] = cs.k / cs.w
		if f := cs.fr; f != nil && out[i] > 0 && f.j != 0 {
			out[i]--
		}
	}
	return out
}
