package template

// Render's grouping of a batch by stream.
//
// Several streams interleaved by share (mixed traffic) were rendered a
// frame at a time: pick the stream, then renderPre or renderStream for one
// frame, every decision taken again per frame. With a few streams and the
// interleaving precomputed, Render instead deals a chunk of the batch out
// by stream (which buffer gets which stream's frame is the interleaving's,
// as before), lets each stream render its frames as one run (renderRun:
// the prerendered loops, the streaming kernel and passes), and puts the
// lengths back in the batch's order. Each stream renders its frames in its
// own order from its own state, so the frames are those of the frame-by-
// frame path, byte for byte (TestByStreamMatchesFrameByFrame); buffers that
// keep their frames stay exact too, whatever stream a buffer held before
// (the memo records every frame rendered, in whatever order).

// maxByStream bounds the streams Render groups: with more, a chunk holds
// too few frames of each to pay for the dealing.
const maxByStream = 16

// byStreamChunk is the most frames dealt out at once.
const byStreamChunk = 256

// byStream holds the dealing: for each pick of the precomputed
// interleaving its stream's position in Source.active, and for a chunk
// each frame's position, the buffers and lengths gathered by stream, and
// where each came from in the chunk.
type byStream struct {
	at    []uint8
	order [byStreamChunk]uint8
	bufs  [byStreamChunk][]byte
	lens  [byStreamChunk]int
	from  [byStreamChunk]uint16
}

// planByStream sets up the grouping when the active streams are few and
// their interleaving is precomputed (interleave).
func (s *Source) planByStream() {
	s.by = nil
	if s.sched == nil || len(s.active) < 2 || len(s.active) > maxByStream {
		return
	}
	pos := map[int]uint8{}
	for g, i := range s.active {
		pos[i] = uint8(g)
	}
	b := &byStream{at: make([]uint8, len(s.sched))}
	for p, i := range s.sched {
		b.at[p] = pos[int(i)]
	}
	s.by = b
}

// renderByStream renders the next frames of the batch (up to
// byStreamChunk) grouped by stream and returns how many, or 0 (nothing
// rendered) when a stream with a count could end within them: the
// frame-by-frame path then takes it out where it ends.
func (s *Source) renderByStream(bufs [][]byte, lens []int, now, nowSum uint64) int {
	b := s.by
	m := min(len(bufs), byStreamChunk)
	for _, i := range s.active {
		if cs := s.streams[i]; !cs.unlimited && cs.left <= uint64(m) {
			return 0
		}
	}
	// Deal: each frame's stream, and the frames per stream.
	var cnt [maxByStream]int
	order := b.order[:m]
	pos := s.pos
	for j := range order {
		g := b.at[pos]
		order[j] = g
		cnt[g&(maxByStream-1)]++
		if pos++; pos == len(b.at) {
			pos = 0
		}
	}
	s.pos = pos
	var next [maxByStream]int
	t := 0
	for g := range next {
		next[g] = t
		t += cnt[g]
	}
	for j, g := range order {
		p := next[g&(maxByStream-1)]
		next[g&(maxByStream-1)]++
		b.bufs[p&(byStreamChunk-1)] = bufs[j]
		b.from[p&(byStreamChunk-1)] = uint16(j)
	}
	// Each stream's frames as one run.
	t = 0
	for g, i := range s.active {
		c := cnt[g&(maxByStream-1)]
		if c == 0 {
			continue
		}
		cs := s.streams[i]
		cs.renderRun(b.bufs[t:t+c], b.lens[t:t+c], now, nowSum)
		if !cs.unlimited {
			cs.left -= uint64(c)
		}
		t += c
	}
	lens = lens[:m]
	for p, j := range b.from[:m] {
		lens[j] = b.lens[p]
	}
	return m
}
