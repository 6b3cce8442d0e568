package pace

import (
	"time"

	"github.com/wpg-dev/wpg/internal/hist"
)

// liveEvery is how often a pacer hands its recent lateness to Collect, and
// liveWindows how many such windows may wait for the reader: one reading
// every liveEvery × liveWindows (400 ms) sees grants up to liveEvery old.
const (
	liveEvery   = 50 * time.Millisecond
	liveWindows = 8
)

func newHist() *hist.Hist { return hist.New(1, histMax.Nanoseconds()) }

func newWindow() *hist.Hist { return hist.NewCoarse(1, histMax.Nanoseconds()) }

// LatenessHist returns an empty histogram with the bounds pacers record
// lateness in (ns), for Collect.
func LatenessHist() *hist.Hist { return newHist() }

// initLive sets up the windows of live lateness (a paced pacer's).
func (p *Pacer) initLive() {
	if p.win != nil {
		return
	}
	p.win = newWindow()
	p.filled = make(chan *hist.Hist, liveWindows)
	p.spares = make(chan *hist.Hist, liveWindows)
	for range liveWindows {
		p.spares <- newWindow()
	}
}

// recordLate records one grant's lateness: the run's histogram and the
// live window handed to Collect.
func (p *Pacer) recordLate(late, now int64) {
	p.hist.Record(late)
	p.win.Record(late)
	if now >= p.winEnd {
		p.handOver(now)
	}
}

// handOver passes the lateness recorded since the last hand-over to
// Collect, if a spare window is left (else win keeps counting and goes at
// the next chance).
func (p *Pacer) handOver(now int64) {
	p.winEnd = now + liveEvery.Nanoseconds()
	if p.win.Count() == 0 {
		return
	}
	select {
	case s := <-p.spares:
		p.filled <- p.win // never blocks: a window is in spares, filled or the reader's hands
		p.win = s
	default:
	}
}

// Collect adds to into the lateness of the grants handed over since the
// last Collect, for a reader on another goroutine while the worker runs:
// the worker hands its recent grants over every 50 ms and never waits for
// the reader, so a reader that collects at least every 400 ms sees grants
// up to about 50 ms old. The windows keep 2 significant digits, so live
// percentiles are within 1 % (Stats is exact). After the worker has
// stopped calling Grant, stopped = true takes the rest as well. A
// flat-out pacer adds nothing. Concurrent Collects must be serialised by
// the caller.
func (p *Pacer) Collect(into *hist.Hist, stopped bool) {
	if p.unlimited {
		return
	}
	for {
		select {
		case h := <-p.filled:
			into.Merge(h)
			h.Reset()
			p.spares <- h
			continue
		default:
		}
		break
	}
	if stopped {
		into.Merge(p.win)
		p.win.Reset()
	}
}
