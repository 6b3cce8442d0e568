package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/pace"
	"github.com/wpg-dev/wpg/report"
)

// monitor takes a running job's snapshot every SnapshotInterval (one for
// all its event streams), stores a sample each SampleInterval and, at its
// end, its report and status.
func (s *Server) monitor(e *entry, rec *JobRecord) {
	defer s.wg.Done()
	tick := time.NewTicker(SnapshotInterval)
	defer tick.Stop()
	// Samples fall on whole seconds of the run's own clock (from its
	// first frame), each taken by a timer aimed at it: the snapshot ticker
	// started before the run, so its tick after second t came up to a
	// quarter of a second late, and sample t held the totals of t+0.25 s.
	sampleAt := time.NewTimer(SampleInterval)
	defer sampleAt.Stop()
	prev := e.run.Snapshot() // the last published
	e.publish(snapshotView(e.id, e.spec, prev, job.Snapshot{}))
	var last job.Snapshot // at the last sample
	var lastX Sample      // the last sample (T 0: none yet)
	var t int64
	// Samples the database refused (a full disk) wait here, in order, and
	// go in before the next one.
	var unsaved []Sample
	save := func(x Sample) {
		unsaved = append(unsaved, x)
		if len(unsaved) > maxUnsaved {
			unsaved = unsaved[len(unsaved)-maxUnsaved:]
		}
		n, err := s.storeSamples(e.id, unsaved)
		if err != nil && n == 0 && len(unsaved) == 1 {
			s.log.Error("job database: sample not stored: kept in memory and retried with the next", "job", e.id, "t", x.T, "err", err)
		}
		if err == nil && len(unsaved) > 1 {
			s.log.Info("job database: the samples kept in memory are stored", "job", e.id, "samples", n)
		}
		unsaved = unsaved[n:]
	}
	for running := true; running; {
		select {
		case <-e.run.Done():
			running = false
		case <-tick.C:
			snap := e.run.Snapshot()
			e.publish(snapshotView(e.id, e.spec, snap, prev))
			prev = snap
		case <-sampleAt.C:
			if wait := sampleWait(e.run.Elapsed(), t); wait > 0 {
				sampleAt.Reset(wait)
				continue
			}
			snap := e.run.Snapshot()
			t = max(t+1, int64(snap.Elapsed/SampleInterval)) // a late timer skips the seconds it missed
			x := sampleOf(t, snap, last)
			last, lastX = snap, x
			save(x)
			sampleAt.Reset(max(sampleWait(snap.Elapsed, t), time.Millisecond))
		}
	}
	rep := e.run.Report()
	end := e.run.Snapshot()
	e.publish(snapshotView(e.id, e.spec, end, prev)) // done: the report's figures and the receivers' answers
	if x, ok := finalSample(t+1, end, last, lastX, rep); ok {
		unsaved = append(unsaved, x)
	}
	rec.EndedAt = time.Now().UnixNano()
	switch {
	case rep == nil:
		rec.Status = StatusFailed
		if err := e.run.Err(); err != nil {
			rec.Error = err.Error()
		}
	case e.stopAsked.Load():
		rec.Status = StatusStopped
	case rep.Failed != nil || rep.Error != "":
		rec.Status = StatusFailed
	default:
		rec.Status = StatusDone
	}
	if rep != nil {
		var b bytes.Buffer
		if err := rep.WriteJSON(&b); err == nil {
			rec.Report = b.Bytes()
		}
		rec.Frames, rec.Bytes = rep.Frames, rep.Bytes
		if rec.Error == "" {
			rec.Error = rep.Error
			if rep.Failed != nil {
				rec.Error = rep.Failed.Error()
			}
		}
	}
	if s.storeEnd(e, rec, unsaved) {
		if n, err := s.store.Prune(context.Background(), int64(s.opt.JobHistoryDB)); err != nil {
			s.log.Error("job database: prune", "err", err)
		} else if n > 0 {
			s.log.Debug("job database: pruned the oldest finished jobs", "jobs", n)
		}
	} else {
		// What the database will say after a restart.
		rec.Status, rec.Report = StatusInterrupted, nil
		rec.Error = "the job ended, and the job database could not store its end before the server stopped: the server's log has its report"
	}
	s.mu.Lock()
	e.final, e.report = rec, rep
	delete(s.running, e.id)
	s.finished = append(s.finished, e)
	if len(s.finished) > s.opt.JobHistory {
		s.finished = slices.Delete(s.finished, 0, len(s.finished)-s.opt.JobHistory)
	}
	s.mu.Unlock()
	close(e.done)
	s.log.Info("job ended", "job", e.id, "status", rec.Status, "frames", rec.Frames)
}

// maxUnsaved bounds the samples a job keeps in memory while the database
// refuses them: a day of seconds (about 10 MB).
const maxUnsaved = 86400

// maxStoreRetry is the longest wait between two tries to store a job's end.
const maxStoreRetry = 30 * time.Second

// storeSamples stores xs in order and returns how many it stored.
func (s *Server) storeSamples(id int64, xs []Sample) (int, error) {
	for i, x := range xs {
		if err := s.store.AddSample(context.Background(), id, x); err != nil {
			return i, err
		}
	}
	return len(xs), nil
}

// storeEnd stores a job's last samples and its end (status, totals,
// report). While the database refuses them (a full disk) the job keeps
// them in memory, reads running with a note (the database still has it
// running) and tries again, from Server.storeRetry up to maxStoreRetry
// apart; when the server shuts down it tries once more. False when that
// failed too: the report goes to the log, and the next start marks the
// job interrupted.
func (s *Server) storeEnd(e *entry, rec *JobRecord, unsaved []Sample) bool {
	wait := s.storeRetry
	try := func() error {
		n, err := s.storeSamples(e.id, unsaved)
		unsaved = unsaved[n:]
		if err != nil {
			return err
		}
		return s.store.Finish(context.Background(), rec)
	}
	for {
		err := try()
		if err == nil {
			if e.unstored.Load() != nil {
				s.log.Info("job database: the job's end is stored now", "job", e.id, "status", rec.Status)
				e.unstored.Store(nil)
			}
			return true
		}
		if e.unstored.Load() == nil {
			s.log.Error("job database: the job's end is not stored: kept in memory and tried again", "job", e.id, "status", rec.Status, "retry", wait, "err", err)
		}
		msg := fmt.Sprintf("the job has ended, and its end is not stored yet (job database: %v): the server keeps it and tries again; make room on the disk of wpg serve --db", err)
		e.unstored.Store(&msg)
		select {
		case <-s.closed:
			if err = try(); err == nil {
				s.log.Info("job database: the job's end is stored now", "job", e.id, "status", rec.Status)
				return true
			}
			s.log.Error("job database: the job's end could not be stored before the server stopped: after a restart it reads interrupted; its report follows",
				"job", e.id, "status", rec.Status, "frames", rec.Frames, "err", err, "report", string(rec.Report))
			return false
		case <-time.After(wait):
		}
		wait = min(2*wait, maxStoreRetry)
	}
}

// sampleWait is how long after elapsed (the run's own clock) the sample
// after sample t is due, at second t+1; 0 or less: due now.
func sampleWait(elapsed time.Duration, t int64) time.Duration {
	return time.Duration(t+1)*SampleInterval - elapsed
}

// sampleOf is second t of a job: its totals at snap and its rates since
// last (the previous sample; zero for the first).
func sampleOf(t int64, snap, last job.Snapshot) Sample {
	l := snap.LatenessSince(last)
	x := Sample{T: t, Frames: snap.Frames, Bytes: snap.Bytes, LatenessP50Ns: l.P50Ns, LatenessP99Ns: l.P99Ns, LatenessMaxNs: l.MaxNs}
	if r := snap.Receiver; r != nil {
		lost := int64(r.Lost)
		x.Lost, x.LatencyP99Ns = &lost, snap.ReceiverLatencySince(last).P99Ns
	}
	dt := (snap.Elapsed - last.Elapsed).Seconds()
	if dt > 0 {
		layer, _ := pace.ParseLayer(snap.BPSLayer) // the report's bps_layer
		x.PPS = float64(snap.Frames-last.Frames) / dt
		x.BPS = layer.Bits(snap.Bytes-last.Bytes, snap.Frames-last.Frames) / dt
	}
	if n := len(snap.Streams); n > 0 && n <= MaxChartStreams {
		// The streams' counts lag Frames by up to engine.StreamsEvery, so
		// their own frames over dt misstate a short window (a job's last
		// part second: 50 ms of frames over 1 ms). Each stream's rate is
		// the window's frame rate split by its share of the frames the
		// streams counted in it.
		x.Streams = make([]StreamSample, n)
		var all uint64
		for i, st := range snap.Streams {
			x.Streams[i].Frames = st.Frames
			all += streamDelta(st.Frames, last.Streams, i)
		}
		if all > 0 {
			for i, st := range snap.Streams {
				x.Streams[i].PPS = x.PPS * float64(streamDelta(st.Frames, last.Streams, i)) / float64(all)
			}
		}
	}
	return x
}

// streamDelta is stream i's frames since last (its counts at the previous
// sample; none before the first): 0 where its count went back.
func streamDelta(frames uint64, last []job.StreamSnapshot, i int) uint64 {
	switch {
	case len(last) == 0:
		return frames
	case i < len(last) && frames >= last[i].Frames:
		return frames - last[i].Frames
	}
	return 0
}

// finalSample is the part second of an ended job after its last sample,
// with the receiver's lost count from the report when it had one; false
// when there is nothing to add. When no frame went since that sample
// (last, stored as prev) and only the receiver's final count is new, it
// is prev again with that count (stored over it), not a sample at t with
// a zero rate that the job page would draw as a drop to zero (issue
// #29); without a sample before it the part second is the job's only one.
func finalSample(t int64, snap, last job.Snapshot, prev Sample, rep *report.Report) (Sample, bool) {
	var lost *int64
	if rep != nil && len(rep.Verification) > 0 {
		var v struct {
			Lost *int64 `json:"lost"`
		}
		if json.Unmarshal(rep.Verification, &v) == nil {
			lost = v.Lost
		}
	}
	if snap.Frames == last.Frames && lost == nil {
		return Sample{}, false
	}
	if snap.Frames == last.Frames && prev.T > 0 {
		prev.Lost = lost
		return prev, true
	}
	x := sampleOf(t, snap, last)
	if lost != nil {
		x.Lost = lost
	}
	return x, true
}
