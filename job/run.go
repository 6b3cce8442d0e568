package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wpg-dev/wpg/engine"
	"github.com/wpg-dev/wpg/internal/hist"
	"github.com/wpg-dev/wpg/pace"
	"github.com/wpg-dev/wpg/peer"
	"github.com/wpg-dev/wpg/recv"
	"github.com/wpg-dev/wpg/report"
)

// Run is a started sending run. Its methods are safe to call from any
// goroutine.
type Run struct {
	pr   *prepared
	job  *engine.Job
	env  Env
	done chan struct{}
	rep  *report.Report
	err  error
	live *liveLateness
	// rx gathers the progress messages of the run's receivers (local
	// paths; nil for the others); rxFinal is their merged answer, once
	// the run has ended with one.
	rx      *peer.Live
	rxFinal *ReceiverSnapshot
	// pair is a port pair's ports and receivers (pair_run.go), nil
	// otherwise; rev and revLive the B→A run of a bidirectional one.
	pair    *pairRun
	rev     *engine.Job
	revLive *liveLateness
	ctx     context.Context
}

// Start validates spec (as Validate does: every problem at once, as
// Problems) and starts the run. It returns at once; the run ends by
// itself (Count, Duration, the template's counts), when ctx is
// cancelled, or on Stop.
func Start(ctx context.Context, spec Spec, env Env) (*Run, error) {
	env = env.withDefaults()
	pr, err := prepare(spec, env)
	if err != nil {
		return nil, err
	}
	live := newLiveLateness(pr.spec.Workers)
	var rx *peer.Live
	if pr.reg.NeedsPeer {
		// The receivers' progress as often as the caller's snapshots (0:
		// the default); the senders' sessions read it into rx.
		rx = peer.NewLive(min(peer.DefaultProgress, max(env.SnapshotEvery, 0)))
		ctx = peer.WithLive(ctx, rx)
	}
	var pair *pairRun
	if pr.pair != nil {
		if pair, err = pr.openPair(ctx); err != nil { // pair_run.go
			return nil, err
		}
	}
	j, err := engine.Start(ctx, pr.engineConfig(live))
	if err != nil {
		if pair != nil {
			pair.close()
		}
		return nil, err
	}
	r := &Run{pr: pr, job: j, env: env, done: make(chan struct{}), live: live, rx: rx, pair: pair, ctx: ctx}
	if rev := pr.pair.reverseRun(); rev != nil {
		r.revLive = newLiveLateness(rev.spec.Workers)
		if r.rev, err = engine.Start(ctx, rev.engineConfig(r.revLive)); err != nil {
			j.Stop(engine.StopError)
			j.Wait()
			pair.close()
			return nil, err
		}
	}
	env.Logger.Debug("run started", "backend", pr.reg.Name, "workers", pr.spec.Workers, "rate", pr.spec.Rate, "cores", pr.cores)
	go r.finish()
	return r, nil
}

func (r *Run) finish() {
	defer close(r.done)
	res := r.job.Wait()
	r.err = res.Err()
	var rres *engine.Result
	if r.rev != nil {
		rres = r.rev.Wait()
		if err := rres.Err(); err != nil {
			r.err = errors.Join(r.err, fmt.Errorf("B→A: %w", err))
		}
	}
	r.env.Logger.Debug("run ended", "backend", r.pr.reg.Name, "frames", res.Frames, "stop", string(res.Stop), "error", r.err)
	if r.err != nil && res.Frames == 0 && !startedAny(res) {
		// Nothing started (a backend could not open): the error is the
		// whole story.
		if r.pair != nil {
			r.pair.close()
		}
		return
	}
	r.rep = r.pr.buildReport(res)
	if r.pair != nil {
		var revRep *report.Report
		var revSent uint64
		if rres != nil {
			revRep, revSent = r.pr.pair.reverse.buildReport(rres), rres.Frames
		}
		r.rep = r.finishPair(r.rep, revRep, res.Frames, revSent)
	}
	r.rxFinal = receiverFinal(r.rep)
}

// receiverFinal is the receivers' merged answer in rep (its verification),
// nil without one.
func receiverFinal(rep *report.Report) *ReceiverSnapshot {
	if rep == nil || len(rep.Verification) == 0 {
		return nil
	}
	var v recv.Result
	if json.Unmarshal(rep.Verification, &v) != nil {
		return nil
	}
	rs := &ReceiverSnapshot{Receivers: max(v.Receivers, 1), Frames: v.Frames, Bytes: v.Bytes, Lost: v.Lost,
		Duplicated: v.Duplicated, Corrupted: v.Corrupted, JitterNs: v.JitterNs, Final: true}
	if l := v.Latency; l != nil {
		rs.Latency = LatenessStats{Count: int64(l.Samples), P50Ns: l.P50Ns, P99Ns: l.P99Ns, MaxNs: l.MaxNs}
	}
	return rs
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

// Stop asks the run to stop, as a cancelled context does (stop reason
// "signal"), and returns at once; Done tells when it has.
func (r *Run) Stop() { r.job.Stop(engine.StopSignal) }

// Done is closed when the run has ended and its report is built.
func (r *Run) Done() <-chan struct{} { return r.done }

// Report waits for the run to end and returns its report: the one wpg
// send prints, with the failed check, if any, in Failed. It is nil when
// no worker could open its backend; Err says why.
func (r *Run) Report() *report.Report {
	<-r.done
	return r.rep
}

// Err waits for the run to end and returns the workers' errors (joined),
// or nil. With a report, the error is also in Report().Error.
func (r *Run) Err() error {
	<-r.done
	return r.err
}

// Elapsed is the time since the workers started sending (0 before): the
// run's own clock, which Snapshot.Elapsed reads too. It is cheaper than a
// Snapshot, for a caller that times its snapshots on the run's clock.
func (r *Run) Elapsed() time.Duration { return r.job.Elapsed() }

// Snapshot is a run's progress so far.
type Snapshot struct {
	// At is when it was taken (Env.Clock).
	At time.Time
	// Elapsed is the time since the workers started sending (0 before).
	Elapsed time.Duration
	// Frames and Bytes are the totals so far; PPS and BPS their mean rates
	// since the start, the bits at BPSLayer (the run's --rate-layer: "l2"
	// or "l1", as the report's bps_layer).
	Frames, Bytes uint64
	PPS, BPS      float64
	BPSLayer      string
	// Workers are the per-worker counts.
	Workers []WorkerSnapshot
	// TargetPPS is the frame rate the run aims at (0: flat out): the
	// rate's, or the long-run rate of streams that keep their own
	// schedules; a bidirectional pair's both directions'.
	TargetPPS float64
	// Streams are the per-stream counts of a packet template's run, in
	// the template's order (nil for payload frames): the frames each
	// worker rendered of each stream, stored every engine.StreamsEvery
	// (50 ms) while the run goes, so up to that much behind Frames (0
	// before a worker's first store); all of them once Done. A port pair's reverse direction (Bidir) is not
	// in them.
	Streams []StreamSnapshot
	// Done is true once the run has ended.
	Done bool
	// Lateness is how late the paced workers' grants were against their
	// deadlines, from the start to about 50 ms before At (each pacer hands
	// its recent grants over every 50 ms, never waiting for a reader); all
	// of them once Done. Zero for a flat-out run. LatenessSince gives the
	// window between two snapshots.
	Lateness LatenessStats
	// LatenessMaxNs, LatenessMeanNs, LatenessP50Ns, LatenessP99Ns: the
	// report's, once Done (zero before, and for flat-out runs).
	LatenessMaxNs, LatenessMeanNs, LatenessP50Ns, LatenessP99Ns int64
	// Receiver is what the run's own receivers (a local path's wpg recv,
	// one per worker) counted so far, from the progress messages they send
	// over the control connection about every 250 ms (or every
	// Env.SnapshotEvery, when shorter); once Done, their
	// answers (the report's verification). Nil when the run has no such
	// receiver, before the first message, and with a receiver that sends
	// none (an older wpg). ReceiverLatencySince gives the latency of a
	// window.
	Receiver *ReceiverSnapshot

	// peer is true when the run has receivers that send progress (a local
	// path): their loss is known, 0 until their first message.
	peer bool
	lat  *hist.Hist // cumulative lateness behind Lateness (nil: none)
	rlat *hist.Hist // cumulative receiver latency behind Receiver.Latency (nil: none)
}

// ReceiverSnapshot is the receivers' counts so far, summed over the
// run's receivers.
type ReceiverSnapshot struct {
	// Receivers is how many receivers the counts come from.
	Receivers int
	// Frames and Bytes count the intact signed frames received (duplicates
	// excluded); Lost the sequence gaps (it can go down: a late frame
	// fills a gap), Duplicated and Corrupted the frames seen twice and
	// those whose check failed.
	Frames, Bytes, Lost, Duplicated, Corrupted uint64
	// Latency is the one-way latency from the start (Count 0: the
	// receivers measured none); while the run goes it covers the frames
	// up to the receivers' latest message, within the histogram's 3
	// significant digits.
	Latency LatenessStats
	// JitterNs is the receivers' RFC 3550 interarrival jitter J (ns), where
	// they say it: a port pair's receiver and a local path's (its progress
	// messages; none from a receiver of before them) as the run goes,
	// every receiver in its final answer (recv.Result.JitterNs).
	JitterNs int64
	// Final is true when the counts are the receivers' answers at the
	// end, not progress.
	Final bool
}

// Sample is s as a report.Sample of the interval since prev (a zero prev:
// since the start), what --interval lines and intervals[] are made of:
// the counts, the lateness p99 of the window and, for a run with its own
// receivers (a local path), their loss and corruption so far and their
// latency p99 of the window. Before the receivers' first progress message
// their counts are 0 (they have reported nothing yet), so that every
// interval of such a run carries its loss and the intervals' loss sums to
// the run's.
func (s Snapshot) Sample(prev Snapshot) report.Sample {
	x := report.Sample{Elapsed: s.Elapsed, Frames: s.Frames, Bytes: s.Bytes, LatenessP99Ns: s.LatenessSince(prev).P99Ns}
	if r := s.Receiver; r != nil || s.peer {
		var lost int64
		var corrupted uint64
		if r != nil {
			lost, corrupted = int64(r.Lost), r.Corrupted
		}
		x.Lost, x.Corrupted = &lost, &corrupted
		x.LatencyP99Ns = s.ReceiverLatencySince(prev).P99Ns
		if r != nil {
			x.JitterNs = r.JitterNs
		}
	}
	return x
}

// ReceiverLatencySince returns the one-way latency the receivers measured
// between prev and s, two snapshots of the same run with prev taken first
// (a zero prev: since the start); zero without a receiver's latency.
func (s Snapshot) ReceiverLatencySince(prev Snapshot) LatenessStats {
	return since(s.rlat, prev.rlat)
}

// LatenessStats summarises the lateness of pacer grants (ns).
type LatenessStats struct {
	// Count is the number of grants (a grant releases a burst of frames).
	Count int64
	// P50Ns, P99Ns and MaxNs are percentiles of the lateness; MaxNs of a
	// window (LatenessSince) is its largest histogram bucket, within 0.1 %.
	P50Ns, P99Ns, MaxNs int64
}

func latenessOf(h *hist.Hist) LatenessStats {
	if h.Count() == 0 {
		return LatenessStats{}
	}
	return LatenessStats{Count: h.Count(), P50Ns: h.Quantile(50), P99Ns: h.Quantile(99), MaxNs: h.Max()}
}

// LatenessSince returns the lateness of the grants between prev and s, two
// snapshots of the same run with prev taken first (a zero prev: since the
// start).
func (s Snapshot) LatenessSince(prev Snapshot) LatenessStats {
	return since(s.lat, prev.lat)
}

// since is the stats of the values recorded between cumulative copies
// prev and h (prev nil: from the start). Counts only grow, so an equal
// count (the same shared copy, as snapshots taken while nothing came in
// get) is an empty window: no histogram is built for it, nor for a window
// from the start (h's own stats).
func since(h, prev *hist.Hist) LatenessStats {
	switch {
	case h == nil || h.Count() == prev.Count():
		return LatenessStats{}
	case prev == nil:
		return latenessOf(h)
	}
	return latenessOf(h.Sub(prev))
}

// liveLateness gathers the pacers' lateness while a run goes, for
// Snapshot.
type liveLateness struct {
	mu     sync.Mutex
	pacers []atomic.Pointer[pace.Pacer]
	cum    *hist.Hist
	// frozen hands out the read-only copies of cum that snapshots carry:
	// snapshots taken while no grant came in share one copy instead of
	// copying the histogram each.
	frozen hist.Frozen
	ended  bool
}

func newLiveLateness(workers int) *liveLateness {
	return &liveLateness{pacers: make([]atomic.Pointer[pace.Pacer], max(workers, 1))}
}

// add registers worker i's pacer (called on the worker's goroutine).
func (l *liveLateness) add(i int, p *pace.Pacer) {
	if l != nil && i >= 0 && i < len(l.pacers) {
		l.pacers[i].Store(p)
	}
}

// snapshot collects what the pacers handed over (everything, once done:
// the workers have stopped) and returns a read-only copy of the
// cumulative histogram, shared with the other snapshots taken since it
// last changed; nil for a flat-out run.
func (l *liveLateness) snapshot(done bool) *hist.Hist {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return l.cum
	}
	for i := range l.pacers {
		p := l.pacers[i].Load()
		if p == nil {
			continue
		}
		if l.cum == nil {
			l.cum = pace.LatenessHist()
		}
		p.Collect(l.cum, done)
	}
	if l.cum == nil {
		return nil
	}
	if done {
		l.ended = true // no more changes: share it
		return l.cum
	}
	return l.frozen.Of(l.cum)
}

// StreamSnapshot is one template stream's counts so far.
type StreamSnapshot struct {
	Stream int    // its index in the template
	Name   string // its name
	Frames uint64
	PPS    float64 // Frames' mean rate since the start
}

// WorkerSnapshot is one worker's counts so far.
type WorkerSnapshot struct {
	Worker        int
	Frames, Bytes uint64
	PPS           float64
}

// Snapshot returns the progress so far. It reads the workers' counters
// (atomics) and takes the lateness the pacers handed over; nothing the hot
// loop waits for, and safe from any goroutine. The lateness and latency
// histograms behind a snapshot are read-only copies shared by every
// snapshot taken until new values come in: a paced run's snapshot copies
// the lateness histogram (some 200 KiB) only when the pacers handed over
// grants since the last copy (at most every 50 ms), and one whose
// receivers measure latency the latency histogram only after a progress
// message; many readers polling one run share the copies.
func (r *Run) Snapshot() Snapshot {
	c := r.job.Counters()
	s := Snapshot{At: r.env.Clock(), Elapsed: r.job.Elapsed(), Workers: make([]WorkerSnapshot, c.Workers())}
	secs := s.Elapsed.Seconds()
	for i := range s.Workers {
		f, b := c.Worker(i)
		w := WorkerSnapshot{Worker: i, Frames: f, Bytes: b}
		if secs > 0 {
			w.PPS = float64(f) / secs
		}
		s.Workers[i] = w
		s.Frames += f
		s.Bytes += b
	}
	s.BPSLayer = r.pr.layer.String()
	if secs > 0 {
		s.PPS = float64(s.Frames) / secs
		s.BPS = r.pr.layer.Bits(s.Bytes, s.Frames) / secs
	}
	s.TargetPPS = r.pr.targetFPS
	if r.rev != nil {
		s.TargetPPS *= 2 // each direction at the rate
	}
	if spec := r.pr.frames.spec; spec != nil {
		counts := c.Streams(nil)
		s.Streams = make([]StreamSnapshot, len(spec.Streams))
		for i := range spec.Streams {
			st := StreamSnapshot{Stream: i, Name: spec.Streams[i].Name}
			if i < len(counts) {
				st.Frames = counts[i]
			}
			if secs > 0 {
				st.PPS = float64(st.Frames) / secs
			}
			s.Streams[i] = st
		}
	}
	done := false
	select {
	case <-r.done:
		done = true
	default:
	}
	if r.rev != nil {
		// A bidirectional pair: the B→A workers follow A→B's.
		c := r.rev.Counters()
		n := len(s.Workers)
		for i := range c.Workers() {
			f, b := c.Worker(i)
			w := WorkerSnapshot{Worker: n + i, Frames: f, Bytes: b}
			if secs > 0 {
				w.PPS = float64(f) / secs
			}
			s.Workers = append(s.Workers, w)
			s.Frames += f
			s.Bytes += b
		}
		if secs > 0 {
			s.PPS = float64(s.Frames) / secs
			s.BPS = r.pr.layer.Bits(s.Bytes, s.Frames) / secs
		}
	}
	s.lat = r.live.snapshot(done)
	s.Lateness = latenessOf(s.lat)
	if r.pair != nil && r.pair.fwd != nil {
		s.peer = true
		s.Receiver, s.rlat = r.pair.live.snapshot()
	}
	if r.rx != nil {
		s.peer = true
		c, h := r.rx.Snapshot()
		if c.Receivers > 0 {
			s.Receiver = &ReceiverSnapshot{Receivers: c.Receivers, Frames: c.Frames, Bytes: c.Bytes, Lost: c.Lost,
				Duplicated: c.Duplicated, Corrupted: c.Corrupted, Latency: latenessOf(h), JitterNs: c.JitterNs}
		}
		s.rlat = h
	}
	select {
	case <-r.done:
		s.Done = true
		if rep := r.rep; rep != nil {
			s.LatenessMaxNs, s.LatenessMeanNs = rep.LatenessMaxNs, rep.LatenessMeanNs
			s.LatenessP50Ns, s.LatenessP99Ns = rep.LatenessP50Ns, rep.LatenessP99Ns
		}
		if f := r.rxFinal; f != nil {
			c := *f
			s.Receiver = &c
		}
	default:
	}
	return s
}
