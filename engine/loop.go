package engine

import (
	"runtime"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/sys"
)

// send runs worker i's loop, then flushes and closes its sender and fills
// its result: frames, time, CPU time, the sender's last word.
func (j *Job) send(i int, res *WorkerResult, src Source, snd backend.Sender, pacer Pacer) {
	cfg := j.cfg
	cpu0 := sys.ThreadCPUTimeNs()
	t0 := time.Now()
	// limited with limit 0 is a worker whose share of the count is
	// nothing (--workers 4 --count 3): it sends nothing, and still
	// appears in the result.
	limited, limit := cfg.Count > 0, share(cfg.Count, i, cfg.Workers)
	live := j.counters.newLiveStreams(i, src)
	frames, bytes, empty, unsent, err := j.loop(snd, src, pacer, limited, limit, i, live)
	// The counts at the end.
	live.store(0)
	err = backend.Name(cfg.Backend.Name, err) // the sender's Reserve or Commit
	if es, ok := src.(ErrSource); ok && err == nil {
		err = es.Err()
	}
	if sc, ok := src.(StreamCounter); ok {
		res.StreamFrames, res.StreamDatagrams = sc.StreamFrames(), sc.StreamDatagrams()
		res.StreamBytes = sc.StreamBytes(bytes + unsent)
	}
	if sl, ok := src.(StreamLatenessCounter); ok {
		if frames, sum, most := sl.StreamLateness(); frames != nil {
			res.StreamLateness = make([]StreamLateness, len(frames))
			for k := range frames {
				res.StreamLateness[k] = StreamLateness{Frames: frames[k], SumNs: sum[k], MaxNs: most[k]}
			}
		}
	}
	var done time.Duration
	if d, ok := pacer.(interface{ Done() }); ok {
		t := time.Now()
		d.Done() // e.g. leave a real-time priority the pacer took
		done = time.Since(t)
	}
	if ferr := snd.Flush(); err == nil && ferr != nil {
		err = backend.Name(cfg.Backend.Name, ferr)
	}
	// Leaving SCHED_FIFO sends nothing, and may hand the CPU to a waiting
	// thread first: not the run's time (tens of µs of a 1 ms run).
	res.end = time.Now().Add(-done)
	res.Seconds = res.end.Sub(t0).Seconds()
	j.doneSending(res.end)
	res.CPUSeconds = float64(sys.ThreadCPUTimeNs()-cpu0) / 1e9
	if cerr := snd.Close(); err == nil && cerr != nil {
		err = backend.Name(cfg.Backend.Name, cerr)
	}
	res.Info = snd.Info()
	if d, ok := snd.(Deliverer); ok {
		// What left the process, not what the sender only accepted
		// (records a failed write lost).
		frames, bytes = d.Delivered()
		j.counters.frames[i].Store(frames)
		j.counters.bytes[i].Store(bytes)
	}
	if pr, ok := snd.(backend.PeerReporter); ok {
		res.PeerReport = pr.PeerReport()
	}
	res.Frames, res.Bytes, res.EmptyReserves = frames, bytes, empty
	if err != nil {
		res.Err = &WorkerError{Worker: i, Err: err, Frames: int64(frames)}
		j.Stop(StopError)
	}
}

// loop is the hot loop. It returns frames and bytes sent, and the bytes
// of frames rendered but not sent (a Commit that took fewer). When
// limited it sends at most limit frames (0 means none, never
// "unlimited"). live (nil: none) stores the source's frames per stream
// when they are due.
func (j *Job) loop(snd backend.Sender, src Source, pacer Pacer, limited bool, limit uint64, i int, live *liveStreams) (frames, bytes, empty, unsent uint64, err error) {
	batch := j.cfg.Batch
	bufs := make([][]byte, batch)
	lens := make([]int, batch)
	now := j.cfg.Now
	stop := &j.stop
	fc, bc := &j.counters.frames[i], &j.counters.bytes[i]
	timed, _ := snd.(TimedSender)
	var stamps []int64
	var sched ScheduledPacer
	ts, _ := src.(TimedSource)
	if ts != nil && !ts.Timed() {
		ts = nil
	}
	if timed != nil {
		stamps = make([]int64, batch)
		sched, _ = pacer.(ScheduledPacer)
		if ts != nil {
			ts.RecordDues(stamps) // Render writes each frame's due time
		}
	}
	prev := now() // the end of the previous batch's render, for stamps
	begun := false
	for !stop.Load() {
		want := batch
		if limited {
			left := limit - frames
			if left == 0 {
				break
			}
			if left < uint64(want) {
				want = int(left)
			}
		}
		if pacer != nil {
			want = pacer.Grant(want, stop)
			if want == 0 {
				break
			}
		}
		if !begun { // once: where the run's frames due begin
			begun = true
			j.result.Workers[i].first = time.Now()
		}
		n, rerr := snd.Reserve(bufs[:want])
		if rerr != nil {
			return frames, bytes, empty, unsent, rerr
		}
		if pacer != nil && n < want {
			pacer.Return(want - n)
		}
		if n == 0 {
			empty++
			runtime.Gosched()
			continue
		}
		t := now()
		m := src.Render(bufs[:n], lens[:n], t)
		sent := 0
		switch {
		case m > 0 && timed != nil:
			if ts == nil {
				stampBatch(stamps[:m], prev, t, sched)
			}
			sent, err = timed.CommitAt(lens[:m], stamps[:m])
		case m > 0:
			sent, err = snd.Commit(lens[:m])
		}
		prev = t
		bytes += sumLens(lens[:sent])
		if sent < m {
			unsent += sumLens(lens[sent:m])
			if pacer != nil {
				pacer.Return(m - sent)
			}
		}
		frames += uint64(sent)
		fc.Store(frames)
		bc.Store(bytes)
		if live != nil && t >= live.next {
			live.store(t)
		}
		if err != nil {
			return frames, bytes, empty, unsent, err
		}
		if m < n {
			break // the source is exhausted
		}
	}
	return frames, bytes, empty, unsent, nil
}

// stampBatch fills stamps with the send time of each frame of a batch
// rendered at t (TimedSender): the scheduled times of a paced run, or, flat
// out, t spread evenly back over the time since the previous batch (prev),
// so that the last frame has t and no two frames share a time.
func stampBatch(stamps []int64, prev, t int64, sched ScheduledPacer) {
	if sched != nil {
		if first, period, ok := sched.Due(); ok {
			for k := range stamps {
				stamps[k] = first + int64(float64(k)*period)
			}
			return
		}
	}
	step := float64(t-prev) / float64(len(stamps))
	for k := range stamps {
		stamps[k] = prev + int64(step*float64(k+1))
	}
}

// sumLens is the sum of a batch's frame lengths, four at a time (one
// dependent add per frame was a few percent of a 64-byte frame's cost on
// the dpdk backend).
func sumLens(lens []int) uint64 {
	var a, b, c, d uint64
	for ; len(lens) >= 4; lens = lens[4:] {
		a += uint64(lens[0])
		b += uint64(lens[1])
		c += uint64(lens[2])
		d += uint64(lens[3])
	}
	for _, l := range lens {
		a += uint64(l)
	}
	return a + b + c + d
}
