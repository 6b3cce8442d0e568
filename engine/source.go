package engine

import (
	"sync/atomic"

	"github.com/wpg-dev/wpg/pace"
)

// Source renders the frames of one worker. A packet template compiles to a
// Source (package template); payload frames are one too (package frame).
//
// Render is called once per batch: it writes up to len(bufs) frames, frame i
// into bufs[i] (len(bufs[i]) >= MaxFrame()), stores each frame's length in
// lens[i], and returns how many it wrote; fewer than len(bufs) means the
// source is exhausted (every stream reached its count) after those frames.
// nowNs is the transmit timestamp (CLOCK_MONOTONIC ns) to put into the
// signature of every frame of this batch. Render must not allocate.
type Source interface {
	Render(bufs [][]byte, lens []int, nowNs int64) int
	// MaxFrame is the largest frame the source produces.
	MaxFrame() int
	// MeanFrame is the average frame length (for bit-rate → frame-rate).
	MeanFrame() float64
	// Plan says how frames are produced: "prerender" or "stream" (or a mix,
	// e.g. "prerender 2/stream 1"); Detail explains the choice.
	Plan() (plan, detail string)
}

// FrameKeeper is implemented by a Source that can write only the bytes
// that change when a buffer still holds the frame it rendered there last
// (package template: large frames rendered into TX-ring slots that come
// round again). The engine calls KeepFrames once, before the first Render,
// when the backend's Sender is a BufferKeeper that keeps its buffers.
type FrameKeeper interface {
	KeepFrames()
}

// BufferKeeper is implemented by a backend.Sender whose Reserve hands out
// the same buffers again and again and whose consumer only reads them: a
// buffer reserved again holds exactly what was rendered into it last
// (an AF_PACKET TX ring: the kernel only reads the slots).
type BufferKeeper interface {
	KeepsBuffers() bool
}

// TimedSender is implemented by a backend.Sender that records when each
// frame was sent (package pcapfile: the record timestamps). The engine
// calls CommitAt instead of Commit, sentNs[i] being frame i's time
// (CLOCK_MONOTONIC ns, Config.Now's timescale): in a paced run the frame's
// scheduled time (ScheduledPacer), in a flat-out run the batch's render
// time spread evenly back over the time since the previous batch, so that
// no two frames share a time and the last of the batch has the render
// time. sentNs is valid only during the call.
type TimedSender interface {
	CommitAt(lens []int, sentNs []int64) (int, error)
}

// ScheduledPacer is implemented by a Pacer that can say when the frames of
// its last grant were due: the first at firstNs (CLOCK_MONOTONIC ns), each
// next one periodNs later. ok is false when it keeps no schedule (flat out).
type ScheduledPacer interface {
	Due() (firstNs int64, periodNs float64, ok bool)
}

// Deliverer is implemented by a backend.Sender that can tell the frames
// which left the process from those it only accepted (package pcapfile:
// the records that reached the file, not those a failed write lost). After
// Close the engine reports Delivered as the worker's frames and bytes.
type Deliverer interface {
	Delivered() (frames, bytes uint64)
}

// TimedSource is implemented by a Source whose frames keep their own
// schedule (package template: streams with their own rates and bursts, a
// capture replayed with its own timing). When Timed reports true the
// engine gives the schedule to the worker's pacer (a Follower, which the
// job must supply, --rate or not), starts every worker's schedule at the
// job's start (Config.Now when the workers were released, which must be
// the pacer's clock), and records each frame's due time as its send time
// on a TimedSender.
type TimedSource interface {
	Source
	pace.Timetable
	// Timed reports whether the source keeps its own schedule.
	Timed() bool
	// RecordDues makes every later Render write frame i's due time into
	// dues[i] (len(dues) is the batch).
	RecordDues(dues []int64)
}

// Follower is implemented by a Pacer that can keep a TimedSource's
// schedule instead of its own rate (pace.Pacer.Follow). The engine calls
// Follow once, before Setup.
type Follower interface {
	Follow(t pace.Timetable)
}

// StreamCounter is implemented by a Source that counts the frames it
// rendered of each of its streams (package template); the engine reports
// them per worker (WorkerResult.StreamFrames) after the loop.
// StreamDatagrams counts what a receiver counts per stream: whole
// datagrams, the last fragment of a fragmented one included (equal to
// StreamFrames for streams that are not fragmented).
//
// StreamBytes counts the bytes of those frames, given rendered, the bytes
// of every frame the source rendered (the engine's count: what it sent,
// and what a send error left unsent), so that a source need not count
// the length of every frame: one whose streams' lengths vary may take
// one stream's bytes as what the others leave of rendered.
type StreamCounter interface {
	StreamFrames() []uint64
	StreamDatagrams() []uint64
	StreamBytes(rendered uint64) []uint64
}

// StreamLateness is how late the frames of a stream with its own schedule
// were rendered against their due times (a TimedSource's stream): Frames
// of them, their lateness summing to SumNs, MaxNs at most (frames on time
// or released a little early count 0); zero for a stream without one.
type StreamLateness struct {
	Frames       uint64
	SumNs, MaxNs int64
}

// StreamLatenessCounter is implemented by a TimedSource that measures the
// lateness of its streams' frames (package template), indexed by stream
// (nil when no stream keeps its own schedule); the engine reports it per
// worker (WorkerResult.StreamLateness) after the loop.
type StreamLatenessCounter interface {
	StreamLateness() (frames []uint64, sumNs, maxNs []int64)
}

// LiveStreamCounter is implemented by a Source that can count its frames
// per stream without allocating (package template): the worker stores
// them every StreamsEvery while the run goes (Counters.Streams).
// AppendStreamFrames appends what StreamFrames returns to dst; it runs on
// the worker's goroutine.
type LiveStreamCounter interface {
	AppendStreamFrames(dst []uint64) []uint64
}

// ErrSource is implemented by a Source that can fail while rendering (a
// capture that can no longer be read): Err, checked after the loop, is
// then the worker's error.
type ErrSource interface {
	Err() error
}

// commonStart starts a worker's timetable at the job's start (origin,
// Config.Now's timescale) rather than at the worker's first grant, so that
// the workers of a job share one schedule.
type commonStart struct {
	TimedSource
	origin *atomic.Int64
}

// Start ignores the pacer's time for the job's.
func (c commonStart) Start(int64) { c.TimedSource.Start(c.origin.Load()) }
