package pace

import (
	"sync/atomic"
	"time"
)

// Timetable is a schedule of frames whose due times are not evenly
// spaced: streams with their own rates and burst shapes, or a capture
// replayed with its own timing (package template's Source). Times are ns
// on the pacer's clock (CLOCK_MONOTONIC timescale).
type Timetable interface {
	// Start fixes the schedule's origin: the first grant's time.
	Start(originNs int64)
	// NextDue returns when the next frame is due; ok is false when the
	// schedule has no frames left.
	NextDue() (ns int64, ok bool)
	// DueBy returns how many of the next frames, at most max, are due at
	// or before ns (at least 1 when NextDue is at or before ns).
	DueBy(ns int64, max int) int
}

// Follow makes the pacer keep t's schedule instead of its fixed rate:
// Grant waits (in the configured wait mode) for the next frame's due
// time and releases the frames due by then, and by the wait's resolution
// after (1 µs; 50 µs for sleep), so that frames a few hundred nanoseconds
// apart go in one grant. Frames that are late go at once, in their order:
// none is skipped, however long the stall. Lateness is measured and
// reported as for a fixed rate. Call Follow before Setup, on a pacer made
// by New with Config.FPS above zero: the schedule's mean rate (what Stats
// reports as the target); Burst and IFG are ignored.
func (p *Pacer) Follow(t Timetable) {
	p.tt = t
	p.unlimited = false
}

// resolution is how far ahead a followed grant takes frames that are
// almost due.
func (p *Pacer) resolution() int64 {
	if p.wait == Sleep {
		return (50 * time.Microsecond).Nanoseconds()
	}
	return time.Microsecond.Nanoseconds()
}

// grantTimed is Grant for a followed Timetable.
func (p *Pacer) grantTimed(max int, stop *atomic.Bool) int {
	now := p.clk.Now()
	if !p.started {
		p.started = true
		p.tt.Start(now)
		p.next = now
	} else if p.boostOK {
		p.workNs += (now - p.lastGrant - p.workNs) / 8
	}
	due, ok := p.tt.NextDue()
	if !ok {
		return max // nothing left: the source's Render returns short and the run ends
	}
	if now = p.await(now, due, stop); now < 0 {
		return 0
	}
	p.lagMax = max64(p.lagMax, now-due)
	n := p.tt.DueBy(now+p.resolution(), max)
	n = min(max, n)
	if n < 1 {
		n = 1
	}
	p.frames += int64(n)
	p.due, p.next = due, due
	return n
}
