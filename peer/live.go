package peer

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/wpg-dev/wpg/internal/hist"
	"github.com/wpg-dev/wpg/recv"
)

// DefaultProgress is the progress period a sender asks of its receivers
// when it watches them (Live): four messages a second.
const DefaultProgress = 250 * time.Millisecond

// Live gathers, for a sending run, the progress messages of its
// receivers (one per worker of a local path): their latest totals and the
// one-way latency of every window they sent. A sender whose Open context
// carries a Live (WithLive) asks its receiver for progress messages and
// reads them on the control connection while it sends; nothing the
// sender's hot loop waits for. Its methods are safe from any goroutine.
type Live struct {
	every time.Duration

	mu    sync.Mutex
	slots []*LiveCounts
	lat   *hist.Hist // every window of every receiver merged (nil: none yet)
	// frozen hands out Snapshot's read-only copies of lat: many readers
	// share one until a message brings latency.
	frozen hist.Frozen
}

// LiveCounts are one receiver's totals from its latest progress message,
// or (Live.Snapshot) the sum over the receivers.
type LiveCounts struct {
	// Receivers is the number of receivers that sent progress so far.
	Receivers int
	// Messages is the number of progress messages read.
	Messages int
	// Elapsed is the receiver's time since its loop started, at its
	// latest message (the largest, summed over receivers).
	Elapsed                                              time.Duration
	Frames, Bytes, Lost, Duplicated, Corrupted, Unsigned uint64
	// JitterNs is the receiver's RFC 3550 interarrival jitter J (ns) at
	// its latest message, or (Snapshot) the receivers' mean weighted by
	// their frames; 0 when none said one (a receiver of before the field).
	JitterNs int64
}

// NewLive returns a Live whose senders ask for a progress message about
// every every (0: DefaultProgress; at least MinProgressMs).
func NewLive(every time.Duration) *Live {
	if every <= 0 {
		every = DefaultProgress
	}
	return &Live{every: max(every, MinProgressMs*time.Millisecond)}
}

type liveKey struct{}

// WithLive returns ctx carrying l: senders opened with it (through
// backend.Open) report their receivers' progress to l.
func WithLive(ctx context.Context, l *Live) context.Context {
	return context.WithValue(ctx, liveKey{}, l)
}

// liveFrom returns the Live ctx carries, or nil.
func liveFrom(ctx context.Context) *Live {
	l, _ := ctx.Value(liveKey{}).(*Live)
	return l
}

// join adds a receiver and returns its slot.
func (l *Live) join() *LiveCounts {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := &LiveCounts{}
	l.slots = append(l.slots, c)
	return c
}

// update records receiver c's progress message p. A latency window that
// does not decode is left out (the counts are kept).
func (l *Live) update(c *LiveCounts, p RecvProgress) {
	var win *hist.Hist
	if len(p.Latency) > 0 {
		win = new(hist.Hist)
		if json.Unmarshal(p.Latency, win) != nil {
			win = nil
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c.Messages++
	c.Elapsed = time.Duration(p.ElapsedNs)
	c.Frames, c.Bytes, c.Lost, c.Duplicated, c.Corrupted, c.Unsigned = p.Frames, p.Bytes, p.Lost, p.Duplicated, p.Corrupted, p.Unsigned
	c.JitterNs = p.JitterNs
	if win != nil {
		if l.lat == nil {
			l.lat = win
		} else {
			l.lat.Merge(win)
		}
	}
}

// Snapshot returns the receivers' totals summed (Receivers 0: none has
// sent progress yet) and a copy of their latency histogram from the start
// (nil when no window carried latency). The copy is read-only: every
// Snapshot until the next message with latency returns the same one.
func (l *Live) Snapshot() (LiveCounts, *hist.Hist) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var s LiveCounts
	var jitter recv.JitterMean
	for _, c := range l.slots {
		if c.Messages == 0 {
			continue
		}
		s.Receivers++
		s.Messages += c.Messages
		s.Elapsed = max(s.Elapsed, c.Elapsed)
		s.Frames += c.Frames
		s.Bytes += c.Bytes
		s.Lost += c.Lost
		s.Duplicated += c.Duplicated
		s.Corrupted += c.Corrupted
		s.Unsigned += c.Unsigned
		jitter.Add(c.JitterNs, c.Frames)
	}
	s.JitterNs = jitter.Ns()
	return s, l.frozen.Of(l.lat)
}
