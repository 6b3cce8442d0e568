package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/sys"
)

// Pacer decides when frames may go; see package pace. Grant blocks until at
// least one frame may be sent and returns how many (1..max), or 0 once stop
// is set. Return gives back frames granted but not sent (the path was
// full). Setup runs once on the worker's own thread before the loop.
type Pacer interface {
	Setup() error
	Grant(max int, stop *atomic.Bool) int
	Return(n int)
}

// Config describes one run.
type Config struct {
	Backend backend.Registration
	// Options open the backend's instance, once per job (Workers and a
	// zero Batch are filled in from this Config); each worker then asks it
	// for its sender.
	Options backend.Options
	// NewSource builds worker i's frame source (called on the worker's
	// pinned thread). ctx is done when the run is stopped (a signal, or
	// another worker failed) before it starts: a long build (prerendering)
	// should then return ctx.Err(), which ends the run with that stop and
	// no error.
	NewSource func(ctx context.Context, worker, workers int) (Source, error)
	// NewPacer builds worker i's pacer; nil means flat out.
	NewPacer func(worker int) Pacer
	// Now returns the transmit timestamp (ns, CLOCK_MONOTONIC timescale).
	Now func() int64

	Workers int
	// Cores lists the CPU of each worker (len == Workers) or is nil for
	// no pinning.
	Cores    []int
	Batch    int
	Count    uint64        // total frames across workers, 0 = until the source ends
	Duration time.Duration // 0 = no time limit
	// Netns, when set, is the network namespace (its file, e.g.
	// /run/netns/NAME) the backend is opened in: the instance on a
	// thread that visits it, each worker's thread moves into it for good
	// before it opens its sender (the runtime discards the thread after).
	Netns string
}

// Job is a started run.
type Job struct {
	cfg      Config
	stop     atomic.Bool
	reason   atomic.Value // Stop
	counters Counters
	start    atomic.Int64 // unix ns when the workers started, 0 before
	t0       time.Time    // when the workers started: written before they are released
	// sending counts the workers that have not finished sending; lastEnd
	// is the latest end of a worker's sending so far, and endAt the run's
	// Elapsed once none sends (each in ns since t0, plus 1: 0 is none).
	sending atomic.Int32
	lastEnd atomic.Int64
	endAt   atomic.Int64
	origin  atomic.Int64 // Config.Now when the workers started: timed sources' common start
	done    chan struct{}
	result  Result
	// halt cancels the context the backends were opened with, so that one
	// blocked on a peer that takes nothing notices the stop.
	halt context.CancelFunc
	inst backend.Instance // the backend opened for this job
}

// Start validates cfg and launches the workers. Cancelling ctx stops them
// cleanly (StopSignal).
func Start(ctx context.Context, cfg Config) (*Job, error) {
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	if cfg.Batch <= 0 {
		return nil, fmt.Errorf("--batch %d: must be at least 1", cfg.Batch)
	}
	if cfg.Duration < 0 {
		return nil, fmt.Errorf("--duration %v: must be positive (or 0 for no time limit)", cfg.Duration)
	}
	if cfg.Backend.SingleWorker && cfg.Workers > 1 {
		return nil, fmt.Errorf("backend %s supports one worker only, got --workers %d: use --workers 1", cfg.Backend.Name, cfg.Workers)
	}
	if cfg.Cores != nil && len(cfg.Cores) != cfg.Workers {
		return nil, fmt.Errorf("%d cores given for %d workers", len(cfg.Cores), cfg.Workers)
	}
	if cfg.Now == nil {
		cfg.Now = sys.MonotonicNs
	}
	ctx, halt := context.WithCancel(ctx)
	j := &Job{cfg: cfg, done: make(chan struct{}), halt: halt}
	j.sending.Store(int32(cfg.Workers))
	j.counters.frames = make([]liveCount, cfg.Workers)
	j.counters.bytes = make([]liveCount, cfg.Workers)
	j.counters.streams = make([]atomic.Pointer[[]atomic.Uint64], cfg.Workers)
	j.result.Workers = make([]WorkerResult, cfg.Workers)
	go j.run(ctx)
	return j, nil
}

// Counters returns the live counters.
func (j *Job) Counters() *Counters { return &j.counters }

// Elapsed returns the time since the workers started sending (0 before),
// up to the end of their sending: once the last worker's frames were
// flushed it stands at the run's Seconds, through the senders' teardown
// and after, so that a sample taken then closes no empty interval.
func (j *Job) Elapsed() time.Duration {
	st := j.start.Load()
	if st == 0 {
		return 0
	}
	if e := j.endAt.Load(); e > 0 {
		return time.Duration(e - 1)
	}
	return time.Since(time.Unix(0, st))
}

// doneSending is called once per worker when it has finished sending: at
// end, its last frames flushed (zero for a worker that never sent). The
// last one stops Elapsed at the latest end.
func (j *Job) doneSending(end time.Time) {
	if !end.IsZero() {
		ns := max(int64(end.Sub(j.t0)), 0) + 1
		for old := j.lastEnd.Load(); ns > old && !j.lastEnd.CompareAndSwap(old, ns); old = j.lastEnd.Load() {
		}
	}
	if j.sending.Add(-1) == 0 {
		j.endAt.Store(max(j.lastEnd.Load(), 1))
	}
}

// Stop asks the workers to stop with the given reason.
func (j *Job) Stop(reason Stop) {
	j.reason.CompareAndSwap(nil, reason)
	j.stop.Store(true)
	j.halt()
}

// Wait blocks until the run ends and returns its result.
func (j *Job) Wait() *Result {
	<-j.done
	return &j.result
}

// Done is closed when the run has ended.
func (j *Job) Done() <-chan struct{} { return j.done }

func (j *Job) run(ctx context.Context) {
	defer close(j.done)
	defer j.halt()
	if err := j.open(ctx); err != nil {
		j.result.Workers[0].Err = err
		j.result.Stop = StopError
		return
	}
	t0, finished := j.startWorkers(ctx)
	j.waitFor(ctx, finished)
	j.tally(t0)
}

// startWorkers starts the workers, waits until every one opened its
// backend (or failed), and lets them send at t0; finished is closed when
// they all have returned.
func (j *Job) startWorkers(ctx context.Context) (t0 time.Time, finished <-chan struct{}) {
	cfg := j.cfg
	var (
		ready   sync.WaitGroup // every worker opened its backend (or failed)
		finish  sync.WaitGroup
		startCh = make(chan struct{})
		failed  atomic.Bool
	)
	ready.Add(cfg.Workers)
	finish.Add(cfg.Workers)
	for i := 0; i < cfg.Workers; i++ {
		go func(i int) {
			defer finish.Done()
			j.worker(ctx, i, &ready, startCh, &failed)
		}(i)
	}
	ready.Wait()
	if failed.Load() {
		j.Stop(StopError)
	}
	if ctx.Err() != nil { // stopped (a signal) while the workers were preparing
		j.Stop(StopSignal)
	}
	t0 = time.Now()
	j.t0 = t0
	j.start.Store(t0.UnixNano())
	j.origin.Store(cfg.Now())
	close(startCh)
	done := make(chan struct{})
	go func() { finish.Wait(); close(done) }()
	return t0, done
}

// waitFor waits until the workers have finished; the run's Duration or
// ctx's end stops them first.
func (j *Job) waitFor(ctx context.Context, finished <-chan struct{}) {
	var timer <-chan time.Time
	if j.cfg.Duration > 0 {
		t := time.NewTimer(j.cfg.Duration)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-finished:
	case <-timer:
		j.Stop(StopDuration)
	case <-ctx.Done():
		j.Stop(StopSignal)
	}
	<-finished
}

// tally closes the backend instance and fills the result of a run that
// began at t0: its time, lead, totals and why it stopped.
func (j *Job) tally(t0 time.Time) {
	cfg := j.cfg
	// The run lasts until the last worker's frames were flushed: tearing
	// the senders down (unmapping a TX ring, closing a socket, 10 ms and
	// more on AF_PACKET) sends nothing, and counting it would understate
	// the rate of a short run (pps = frames / Seconds).
	end := t0
	for _, w := range j.result.Workers {
		if w.end.After(end) {
			end = w.end
		}
	}
	if end.Equal(t0) { // no worker got as far as sending
		end = time.Now()
	}
	elapsed := end.Sub(t0).Seconds()
	if err := j.inst.Close(); err != nil && j.result.Err() == nil {
		j.result.Workers[0].Err = backend.Name(cfg.Backend.Name, fmt.Errorf("close: %w", err))
	}

	r := &j.result
	r.Seconds = elapsed
	r.Start = t0
	var first time.Time
	for _, w := range r.Workers {
		if !w.first.IsZero() && (first.IsZero() || w.first.Before(first)) {
			first = w.first
		}
	}
	if !first.IsZero() {
		r.Lead = min(max(first.Sub(t0).Seconds(), 0), elapsed)
	}
	for _, w := range r.Workers {
		r.Frames += w.Frames
		r.Bytes += w.Bytes
		if w.Err != nil {
			j.reason.CompareAndSwap(nil, StopError)
		}
	}
	if v, ok := j.reason.Load().(Stop); ok {
		r.Stop = v
	} else if cfg.Count > 0 && r.Frames >= cfg.Count {
		r.Stop = StopCount
	} else {
		r.Stop = StopSource
	}
}

// open opens the job's backend instance.
func (j *Job) open(ctx context.Context) error {
	cfg := j.cfg
	if cfg.Backend.Open == nil {
		return &backend.UnsupportedError{Backend: cfg.Backend.Name, What: "sending", Reason: "the registration has no Open"}
	}
	opts := cfg.Options
	opts.Workers = cfg.Workers
	if opts.Batch <= 0 {
		opts.Batch = cfg.Batch
	}
	var inst backend.Instance
	var err error
	if cfg.Netns != "" {
		err = sys.RunInNetns(cfg.Netns, func() (err error) { inst, err = cfg.Backend.Open(ctx, opts); return err })
	} else {
		inst, err = cfg.Backend.Open(ctx, opts)
	}
	if err != nil {
		// "afxdp: queues 0-1 …" as "afxdp: interface …": the backend's
		// name once, whether the backend's error gave it or not.
		return backend.Name(cfg.Backend.Name, err)
	}
	j.inst = inst
	return nil
}

// share returns worker i's part of total (k ≡ i mod w).
func share(total uint64, i, w int) uint64 {
	n := total / uint64(w)
	if uint64(i) < total%uint64(w) {
		n++
	}
	return n
}

func (j *Job) worker(ctx context.Context, i int, ready *sync.WaitGroup, startCh <-chan struct{}, failed *atomic.Bool) {
	res := &j.result.Workers[i]
	res.Worker, res.CPU = i, -1
	runtime.LockOSThread()
	// The thread stays locked until the goroutine exits; the runtime then
	// discards it, so a pinned thread never returns to the pool.
	readied := false
	markReady := func() {
		if !readied {
			readied = true
			ready.Done()
		}
	}
	defer markReady()
	defer func() {
		if res.end.IsZero() { // it never sent (send calls doneSending itself)
			j.doneSending(time.Time{})
		}
	}()
	src, snd, pacer, err := j.prepare(ctx, i, res)
	if c, ok := src.(interface{ Close() error }); ok {
		defer c.Close() // files a source reads (a replayed capture), also when the worker fails
	}
	switch {
	case errors.Is(err, errStopped):
		markReady() // stopped while building its frames: not a failure
		return
	case err != nil:
		res.Err = &WorkerError{Worker: i, Err: err, Frames: -1}
		failed.Store(true)
		markReady()
		return
	}
	if i == 0 {
		j.result.MeanFrame = src.MeanFrame()
		j.result.MaxFrame = src.MaxFrame()
	}
	markReady()
	<-startCh
	j.send(i, res, src, snd, pacer)
}

// errStopped is prepare's answer when the run was stopped while the
// worker built its frames: not a failure.
var errStopped = errors.New("stopped while preparing")

// prepare readies worker i on its locked thread: its network namespace
// and core, then (allocated after pinning: first touch) its source, its
// sender and its pacer. The source is returned once built, also with an
// error, for the worker to close; the sender is closed on an error.
func (j *Job) prepare(ctx context.Context, i int, res *WorkerResult) (src Source, snd backend.Sender, pacer Pacer, err error) {
	cfg := j.cfg
	if cfg.Netns != "" {
		if err := sys.JoinNetns(cfg.Netns); err != nil {
			return nil, nil, nil, err
		}
	}
	if cfg.Cores != nil {
		if err := sys.PinThread(cfg.Cores[i]); err != nil {
			return nil, nil, nil, err
		}
		res.CPU = cfg.Cores[i]
	}
	// Everything below is allocated after pinning (first touch).
	src, err = cfg.NewSource(ctx, i, cfg.Workers)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, nil, nil, errStopped
		}
		return nil, nil, nil, err
	}
	snd, err = j.inst.NewSender(backend.Worker{Index: i, MaxFrame: max(cfg.Options.MaxFrame, src.MaxFrame())})
	if err != nil {
		return src, nil, nil, backend.Name(cfg.Backend.Name, err)
	}
	res.Info = snd.Info()
	if snd.MaxFrame() < src.MaxFrame() {
		snd.Close()
		return src, nil, nil, backend.Errorf(cfg.Backend.Name, "frames of at most %d bytes fit its sender, the template needs %d", snd.MaxFrame(), src.MaxFrame())
	}
	if fk, ok := src.(FrameKeeper); ok {
		if bk, ok := snd.(BufferKeeper); ok && bk.KeepsBuffers() {
			fk.KeepFrames()
		}
	}
	res.Plan, res.PlanDetail = src.Plan() // after KeepFrames, which the detail tells
	if pacer, err = j.newPacer(i, res, src); err != nil {
		snd.Close()
		return src, nil, nil, err
	}
	return src, snd, pacer, nil
}

// newPacer makes worker i's pacer (nil for a run flat out), which follows
// the source's own schedule when its streams keep one.
func (j *Job) newPacer(i int, res *WorkerResult, src Source) (Pacer, error) {
	ts, _ := src.(TimedSource)
	if ts != nil && !ts.Timed() {
		ts = nil
	}
	if j.cfg.NewPacer == nil {
		if ts != nil {
			return nil, errors.New("the streams keep their own schedules, and the run has no pacer to keep them")
		}
		return nil, nil
	}
	pacer := j.cfg.NewPacer(i)
	res.Pacer = pacer
	if f, ok := pacer.(Follower); ok && ts != nil {
		f.Follow(commonStart{ts, &j.origin}) // the source's own schedule instead of one rate
	} else if ts != nil {
		return nil, errors.New("the streams keep their own schedules, and the run's pacer cannot follow them")
	}
	if err := pacer.Setup(); err != nil {
		return nil, err
	}
	return pacer, nil
}
