package engine

import "sync/atomic"

// Counters are the live totals of a running job, for progress display.
type Counters struct {
	frames []liveCount
	bytes  []liveCount
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
