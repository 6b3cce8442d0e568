package template

import "slices"

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

// byStream holds the dealing: for each active stream (by its position in
// Source.active) the picks of the precomputed interleaving that are its,
// ascending; and for a chunk the buffers and lengths gathered by stream
// and where each came from in the chunk.
type byStream struct {
	picks [][]int
	bufs  [byStreamChunk][]byte
	lens  [byStreamChunk]int
	from  [byStreamChunk]int
}

// planByStream sets up the grouping when the active streams are few and
// their interleaving is precomputed (interleave).
func (s *Source) planByStream() {
	s.by = nil
	if s.sched == nil || len(s.active) < 2 || len(s.active) > maxByStream {
		return
	}
	pos := map[int]int{}
	for g, i := range s.active {
		pos[i] = g
	}
	b := &byStream{picks: make([][]int, len(s.active))}
	for p, i := range s.sched {
		g := pos[int(i)]
		b.picks[g] = append(b.picks[g], p)
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
	// Deal: frame j of the chunk is pick pos+j of the interleaving (of
	// period P); each stream takes its picks in order, period after
	// period, and renders the frames they give as one run.
	pos, period := s.pos, len(s.sched)
	t := 0
	for g, i := range s.active {
		picks := b.picks[g]
		if len(picks) == 0 {
			continue
		}
		k, _ := slices.BinarySearch(picks, pos) // its first pick at pos or after
		base, start := -pos, t
		for {
			if k == len(picks) {
				k, base = 0, base+period
			}
			j := base + picks[k]
			if j >= m {
				break
			}
			b.bufs[t&(byStreamChunk-1)] = bufs[j]
			b.from[t&(byStreamChunk-1)] = j
			t++
			k++
		}
		if c := t - start; c > 0 {
			cs := s.streams[i]
			cs.renderRun(b.bufs[start:t], b.lens[start:t], now, nowSum)
			if !cs.unlimited {
				cs.left -= uint64(c)
			}
		}
	}
	s.pos = (pos + m) % period
	lens = lens[:m]
	for p, j := range b.from[:m] {
		lens[j] = b.lens[p]
	}
	return m
}
