package engine

// Workers returns how many workers the counters cover.
func (c *Counters) Workers() int { return len(c.frames) }

// Worker returns worker i's live counts; safe from any goroutine.
func (c *Counters) Worker(i int) (frames, bytes uint64) {
	return c.frames[i].Load(), c.bytes[i].Load()
}
