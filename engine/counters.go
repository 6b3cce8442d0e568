package engine

import (
	"sync/atomic"
	"time"
)

// Counters are the live totals of a running job, for progress display.
type Counters struct {
	frames []liveCount
	bytes  []liveCount
	// streams are each worker's frames per stream (nil: its source counts
	// none), stored every StreamsEvery while the run goes and once at
	// its end.
	streams []atomic.Pointer[[]atomic.Uint64]
}

// liveCount is one worker's live count, alone in 128 bytes (a cache line
// and the one the CPU fetches with it): each worker stores its own after
// every batch, and two workers' counts in one line would move the line
// between their CPUs at every store.
type liveCount struct {
	atomic.Uint64
	_ [120]byte
}

// Totals sums the workers' counters.
func (c *Counters) Totals() (frames, bytes uint64) {
	for i := range c.frames {
		frames += c.frames[i].Load()
		bytes += c.bytes[i].Load()
	}
	return
}

// Workers returns how many workers the counters cover.
func (c *Counters) Workers() int { return len(c.frames) }

// Worker returns worker i's live counts; safe from any goroutine.
func (c *Counters) Worker(i int) (frames, bytes uint64) {
	return c.frames[i].Load(), c.bytes[i].Load()
}

// StreamsEvery is how often a worker stores its frames per stream for
// Counters.Streams: a store per stream at most this often, whatever the
// batch size.
const StreamsEvery = 50 * time.Millisecond

// Streams adds the frames of each stream the workers' sources rendered
// so far (a LiveStreamCounter's, up to StreamsEvery old) into dst, grown
// to the streams' count, and returns it; nil when no worker's source
// counts them. Safe from any goroutine.
func (c *Counters) Streams(dst []uint64) []uint64 {
	dst = dst[:0]
	for i := range c.streams {
		p := c.streams[i].Load()
		if p == nil {
			continue
		}
		for k := range *p {
			if k == len(dst) {
				dst = append(dst, 0)
			}
			dst[k] += (*p)[k].Load()
		}
	}
	if len(dst) == 0 {
		return nil
	}
	return dst
}

// liveStreams stores a worker's frames per stream for Counters.Streams.
type liveStreams struct {
	src  LiveStreamCounter
	buf  []uint64
	out  []atomic.Uint64
	next int64 // when the next store is due (Config.Now's timescale)
}

// newLiveStreams returns worker i's store, nil when its source counts no
// streams.
func (c *Counters) newLiveStreams(i int, src Source) *liveStreams {
	lc, ok := src.(LiveStreamCounter)
	if !ok || i >= len(c.streams) {
		return nil
	}
	l := &liveStreams{src: lc, buf: lc.AppendStreamFrames(nil)}
	if len(l.buf) == 0 {
		return nil
	}
	l.out = make([]atomic.Uint64, len(l.buf))
	c.streams[i].Store(&l.out)
	return l
}

// store copies the source's counts when they are due at now (always when
// now is 0); no allocation.
func (l *liveStreams) store(now int64) {
	if l == nil || (now != 0 && now < l.next) {
		return
	}
	l.next = now + int64(StreamsEvery)
	l.buf = l.src.AppendStreamFrames(l.buf[:0])
	for k := range min(len(l.buf), len(l.out)) {
		l.out[k].Store(l.buf[k])
	}
}
