package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/hist"
	"github.com/wpg-dev/wpg/internal/printable"
	"github.com/wpg-dev/wpg/nexthop"
	"github.com/wpg-dev/wpg/recv"
	"github.com/wpg-dev/wpg/report"
)

// The drain of a port pair's receivers after its senders ended: they
// stop once every frame sent arrived, when nothing came for drainQuiet,
// or after drainMax at the latest (a device that queues a second's
// traffic and more is rare; its late frames count as lost).
const (
	drainQuiet = 300 * time.Millisecond
	drainMax   = 5 * time.Second
	// pairProgress is how often a pair's receivers report their counts:
	// the live snapshots and the drain read them.
	pairProgress = 100 * time.Millisecond
)

// pairRun is a port pair while it runs: the ports' agents and the
// receivers (fwd on the receiving port; rev on the sending one, with
// --bidir).
type pairRun struct {
	ports    []*portRun
	fwd, rev *rxSide
	live     *pairLive
}

// portRun is a port whose address the run answers for.
type portRun struct {
	role  string
	plan  portPlan
	agent *nexthop.Agent
	gw    net.HardwareAddr
}

// openPair opens what a pair needs before its senders start: each
// port's agent, which resolves its gateway (the senders' destination
// MAC, filled into the frames here) and answers for the port's address,
// and the receivers. On an error everything opened is closed again.
func (pr *prepared) openPair(ctx context.Context) (*pairRun, error) {
	pl := pr.pair
	pp := &pairRun{live: &pairLive{}}
	ok := false
	defer func() {
		if !ok {
			pp.close()
		}
	}()
	for _, x := range []struct {
		role string
		plan portPlan
		p    *prepared // whose frames the port sends (nil: none)
	}{{"tx", pl.tx, pr}, {"rx", pl.rx, pl.reverse}} {
		if x.plan.iface == "" || x.plan.port == nil {
			continue
		}
		port := &portRun{role: x.role, plan: x.plan}
		var err error
		if err = inNetns(x.plan.netns, func() (err error) {
			port.agent, err = nexthop.Open(x.plan.iface, *x.plan.port, nexthop.Options{Tags: x.plan.tags})
			return err
		}); err != nil {
			return nil, err
		}
		pp.ports = append(pp.ports, port)
		if x.plan.port.Gateway.IsValid() {
			// Also when the port only receives: the device learns the
			// port's MAC from the request before the first frame.
			if port.gw, err = port.agent.Resolve(ctx); err != nil {
				return nil, err
			}
		}
		if x.p != nil {
			usePort(x.p.frames.spec, port.agent.MAC(), port.gw, x.plan.port)
		}
	}
	if pl.rx.iface == "" {
		ok = true
		return pp, nil
	}
	var err error
	if pp.fwd, err = openRx(ctx, pl.rxReg, pl.rx, streamSet(0, len(pr.frames.spec.Streams)), pp.live); err != nil {
		if ie := (*backend.InterfaceError)(nil); errors.As(err, &ie) && ie.Interface != "" && !ie.Down {
			where := "this process's network namespace"
			if pl.rx.netns != "" {
				where = "network namespace " + pl.rx.netns
			}
			return nil, &OptionError{Field: "rx_interface", Value: pl.rx.iface, Err: err,
				Reason: fmt.Sprintf("no such network interface in %s (existing: %s)", where, strings.Join(ie.Existing, ", ")),
				Fix:    "give the device's other port, with {rx_netns} NS where it lies in another network namespace"}
		}
		return nil, fmt.Errorf("receiving port %s: %w", pl.rx.iface, err)
	}
	if rev := pl.reverse; rev != nil {
		if pp.rev, err = openRx(ctx, pl.rxReg, pl.tx, streamSet(int(pl.base), len(rev.frames.spec.Streams)), pp.live); err != nil {
			return nil, fmt.Errorf("receiving port %s (B→A): %w", pl.tx.iface, err)
		}
	}
	ok = true
	return pp, nil
}

// reverseRun is the B→A run of a bidirectional pair, nil otherwise (and
// for a nil plan).
func (pl *pairPlan) reverseRun() *prepared {
	if pl == nil {
		return nil
	}
	return pl.reverse
}

// streamSet is the set of n stream ids from base.
func streamSet(base, n int) *recv.StreamSet {
	var s recv.StreamSet
	for i := range n {
		s.Add(uint16(base + i))
	}
	return &s
}

// close stops the receivers (if still running) and the agents.
func (pp *pairRun) close() {
	for _, x := range []*rxSide{pp.fwd, pp.rev} {
		if x != nil {
			x.cancel()
			<-x.done
		}
	}
	for _, p := range pp.ports {
		p.agent.Close()
	}
}

// rxSide is one receiving port of a pair: its reception running on a
// goroutine of its own until the pair drains it.
type rxSide struct {
	iface  string
	cancel context.CancelFunc
	done   chan struct{}
	res    recv.Result
	err    error
	slot   *pairSlot
}

// openRx opens the receiver of a port and starts it.
func openRx(ctx context.Context, reg backend.Registration, plan portPlan, streams *recv.StreamSet, live *pairLive) (*rxSide, error) {
	// The receiver outlives a stopped run (Ctrl-C): it is stopped by the
	// pair, after its drain (bounded by drainMax) or by close, so that the
	// frames already on their way are counted, not judged lost.
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var rec *Reception
	err := inNetns(plan.netns, func() (err error) {
		rec, err = Receive(rctx, RecvSpec{Backend: reg.Name, Interface: plan.iface}, Env{})
		return err
	})
	if err != nil {
		cancel()
		return nil, err
	}
	rec.streams = streams
	x := &rxSide{iface: plan.iface, cancel: cancel, done: make(chan struct{}), slot: live.join()}
	go func() {
		defer close(x.done)
		x.res, x.err = rec.Wait(func(p recv.Progress) { live.update(x.slot, p) }, pairProgress)
	}()
	return x, nil
}

// drain waits until the receiver saw sent frames, or nothing for
// drainQuiet (from the senders' end at the earliest), or drainMax, then
// stops it and returns its result with stop "drained". It drains a run
// stopped by Ctrl-C (ctx done) too: the frames sent before the stop
// are still on their way.
func (x *rxSide) drain(sent uint64, live *pairLive) (recv.Result, error) {
	start := time.Now()
	for t := time.NewTicker(20 * time.Millisecond); ; {
		frames, changed := live.seen(x.slot)
		if changed.Before(start) {
			changed = start
		}
		if frames >= sent || time.Since(changed) >= drainQuiet || time.Since(start) >= drainMax {
			t.Stop()
			break
		}
		select {
		case <-x.done:
			t.Stop()
			return x.res, x.err
		case <-t.C:
		}
	}
	x.cancel()
	<-x.done
	res, err := x.res, x.err
	if res.Stop == "interrupted" {
		res.Stop = "drained"
	}
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return res, err
}

// pairLive gathers the progress of a pair's receivers for snapshots.
type pairLive struct {
	mu     sync.Mutex
	slots  []*pairSlot
	lat    *hist.Hist // every receiver's windows merged (nil: none yet)
	frozen hist.Frozen
}

// pairSlot is one receiver's latest progress.
type pairSlot struct {
	p       recv.Progress
	changed time.Time // when its frame count last grew
	got     bool
}

func (l *pairLive) join() *pairSlot {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := &pairSlot{}
	l.slots = append(l.slots, s)
	return s
}

// update takes a receiver's progress (on its receive loop: quick).
func (l *pairLive) update(s *pairSlot, p recv.Progress) {
	var win *hist.Hist
	if b, err := p.MarshalLatency(); err == nil && len(b) > 0 {
		win = new(hist.Hist)
		if json.Unmarshal(b, win) != nil {
			win = nil
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if p.Frames != s.p.Frames || !s.got {
		s.changed = time.Now()
	}
	s.p, s.got = p, true
	if win != nil {
		if l.lat == nil {
			l.lat = win // decoded here: ours to keep
		} else {
			l.lat.Merge(win)
		}
	}
}

// seen is a receiver's frames so far and when they last grew.
func (l *pairLive) seen(s *pairSlot) (uint64, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return s.p.Frames, s.changed
}

// snapshot is the receivers' counts summed, and a read-only copy of
// their latency; nil before any progress.
func (l *pairLive) snapshot() (*ReceiverSnapshot, *hist.Hist) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var rs ReceiverSnapshot
	var jitter recv.JitterMean
	for _, s := range l.slots {
		if !s.got {
			continue
		}
		rs.Receivers++
		rs.Frames += s.p.Frames
		rs.Bytes += s.p.Bytes
		rs.Lost += s.p.Lost
		rs.Duplicated += s.p.Duplicated
		rs.Corrupted += s.p.Corrupted
		jitter.Add(s.p.JitterNs, s.p.Frames)
	}
	if rs.Receivers == 0 {
		return nil, nil
	}
	rs.JitterNs = jitter.Ns()
	var h *hist.Hist
	if l.lat != nil {
		h = l.frozen.Of(l.lat)
		rs.Latency = latenessOf(h)
	}
	return &rs, h
}

// finishPair drains the receivers once the senders ended (sent and
// revSent frames) and puts what the pair saw into the reports: each
// direction's receiver as its verification (and its verdict), the
// ports. With --bidir it returns the report of both directions.
func (r *Run) finishPair(rep, revRep *report.Report, sent, revSent uint64) *report.Report {
	pp := r.pair
	type out struct {
		res recv.Result
		err error
	}
	var fwd, rev out
	var wg sync.WaitGroup
	if pp.fwd != nil {
		wg.Go(func() { fwd.res, fwd.err = pp.fwd.drain(sent, pp.live) })
	}
	if pp.rev != nil {
		wg.Go(func() { rev.res, rev.err = pp.rev.drain(revSent, pp.live) })
	}
	wg.Wait()
	for _, p := range pp.ports {
		p.agent.Close()
	}
	s := r.pr.spec
	if rep == nil {
		return nil
	}
	rep.Ports = pp.reportPorts()
	if pp.fwd == nil {
		return rep // a port with an address, no receiving port
	}
	attachReceiver(s, rep, fwd.res, fwd.err, "A→B", s.Interface, s.RxInterface, 0)
	if revRep == nil {
		return rep
	}
	attachReceiver(r.pr.pair.reverse.spec, revRep, rev.res, rev.err, "B→A", s.RxInterface, s.Interface, r.pr.pair.base)
	return combineDirections(rep, revRep, r.pr.pair.base, fwd.res, rev.res)
}

// reportPorts describes the ports for the report.
func (pp *pairRun) reportPorts() []report.Port {
	var ps []report.Port
	for _, p := range pp.ports {
		rp := report.Port{Role: p.role, Interface: p.plan.iface, Netns: p.plan.netns, MAC: p.agent.MAC().String(),
			Address: p.plan.port.Addr.String(), Answered: p.agent.Answered(), Kernel: !p.agent.Answering()}
		if p.plan.port.Gateway.IsValid() {
			rp.Gateway = p.plan.port.Gateway.String()
		}
		if p.gw != nil {
			rp.GatewayMAC = p.gw.String()
		}
		for _, t := range p.plan.tags {
			rp.VLANTags = append(rp.VLANTags, report.NewVLANTag(t.TPID, t.ID))
		}
		ps = append(ps, rp)
	}
	return ps
}

// attachReceiver makes a receiver's result rep's verification and its
// single direction, and judges the run again with it.
func attachReceiver(s Spec, rep *report.Report, res recv.Result, err error, name, from, to string, base uint16) {
	if err != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the receiver on %s stopped with an error: %v", to, err))
		if rep.Error == "" {
			rep.Error = "receiver on " + to + ": " + err.Error()
		}
	}
	rep.Verification, _ = res.MarshalPeer() // with latency_histogram: reports merge exactly
	if old := rep.Failed; old != nil {
		// Judged again below, the receiver's check first.
		rep.Notes = removeNote(rep.Notes, old.Message)
	}
	got := map[int]uint64{}
	for _, st := range res.Streams {
		got[int(st.Stream)] = st.Frames
	}
	for _, st := range rep.Streams {
		if sent := max(st.Datagrams, st.Frames); sent > 0 && got[st.Stream+int(base)] == 0 && res.Frames > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("stream %d (%s): %d sent, none arrived on %s: the device dropped or diverted the whole stream (a filter, a route)", st.Stream, printable.Escape(st.Name), sent, to))
		}
	}
	if res.Frames == 0 && rep.Frames > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("nothing that was sent arrived on %s: check that the device forwards to that port (its routes, its neighbour entry for the receiving port's address), and the frames' addresses (wpg preview)", to))
	}
	if rep.Failed = checkOutcome(s, rep); rep.Failed != nil {
		rep.Notes = append(rep.Notes, rep.Failed.Message)
	}
	rep.Directions = []report.Direction{directionOf(rep, name, from, to)}
}

// directionOf is rep as one direction of a pair.
func directionOf(rep *report.Report, name, from, to string) report.Direction {
	d := report.Direction{Direction: name, From: from, To: to, Frames: rep.Frames, Bytes: rep.Bytes, Seconds: rep.Seconds,
		PPS: rep.PPS, BPS: rep.BPS, TargetPPS: rep.TargetPPS, AchievedRatio: rep.AchievedRatio, Verification: rep.Verification, Verdict: "pass"}
	if rep.Failed != nil {
		d.Verdict = rep.Failed.Message
	}
	return d
}

// removeNote is notes without the first one equal to n.
func removeNote(notes []string, n string) []string {
	for i, x := range notes {
		if x == n {
			return append(notes[:i:i], notes[i+1:]...)
		}
	}
	return notes
}

// combineDirections is the report of a bidirectional pair: rep (A→B)
// with rev's (B→A) frames, workers, streams and notes added, both
// receivers merged as its verification, and a failed check when either
// direction failed.
func combineDirections(rep, rev *report.Report, base uint16, fwdRes, revRes recv.Result) *report.Report {
	rep.Directions = append(rep.Directions, rev.Directions...)
	rep.Frames += rev.Frames
	rep.Bytes += rev.Bytes
	rep.PPS += rev.PPS
	rep.BPS += rev.BPS
	rep.Seconds = max(rep.Seconds, rev.Seconds)
	if rep.Frames > 0 {
		rep.FrameSize = float64(rep.Bytes) / float64(rep.Frames)
	}
	if rep.TargetPPS > 0 || rev.TargetPPS > 0 {
		rep.TargetPPS += rev.TargetPPS
		rep.AchievedRatio = min(rep.Directions[0].AchievedRatio, rev.AchievedRatio)
	}
	rep.LatenessMaxNs = max(rep.LatenessMaxNs, rev.LatenessMaxNs)
	rep.LatenessP99Ns = max(rep.LatenessP99Ns, rev.LatenessP99Ns)
	rep.CPUSeconds += rev.CPUSeconds
	n := len(rep.Workers)
	for _, w := range rev.Workers {
		w.Worker += n
		rep.Workers = append(rep.Workers, w)
	}
	for _, st := range rev.Streams {
		st.Stream += int(base)
		rep.Streams = append(rep.Streams, st)
	}
	for _, note := range rev.Notes {
		if rev.Failed != nil && note == rev.Failed.Message {
			continue
		}
		rep.Notes = append(rep.Notes, "B→A: "+note)
	}
	if rep.Failed != nil {
		rep.Notes = removeNote(rep.Notes, rep.Failed.Message)
	}
	if rev.Error != "" {
		rep.Error = strings.TrimPrefix(rep.Error+"; B→A: "+rev.Error, "; ")
	}
	rep.Verification, _ = recv.Merge(fwdRes, revRes).MarshalPeer()
	var bad []string
	for _, d := range rep.Directions {
		if d.Verdict != "pass" {
			bad = append(bad, d.Direction+": "+d.Verdict)
		}
	}
	rep.Failed = nil
	if len(bad) > 0 {
		rep.Failed = &report.CheckFailure{Check: report.CheckVerification, Message: strings.Join(bad, "; ")}
		rep.Notes = append(rep.Notes, rep.Failed.Message)
	}
	return rep
}
