package report

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"
)

// Progress draws a live status line (rate, frames, elapsed) on a terminal,
// refreshed every interval, and draws nothing when out is not a terminal.
type Progress struct {
	out  io.Writer
	stop chan struct{}
	done chan struct{}
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// StartProgress starts drawing on out every interval using totals, which
// returns frames, bytes and elapsed time. It returns nil (and draws
// nothing) when out is not a terminal; Stop on a nil *Progress is a no-op.
func StartProgress(out io.Writer, interval time.Duration, totals func() (frames, bytes uint64, elapsed time.Duration)) *Progress {
	if !IsTerminal(out) {
		return nil
	}
	p := &Progress{out: out, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		var lastF uint64
		var lastT time.Duration
		for {
			select {
			case <-p.stop:
				fmt.Fprint(out, "\r\033[K")
				return
			case <-t.C:
				f, b, el := totals()
				rate := 0.0
				if dt := (el - lastT).Seconds(); dt > 0 {
					rate = float64(f-lastF) / dt
				}
				lastF, lastT = f, el
				fmt.Fprintf(out, "\r\033[K%s pps  %d frames  %s  %s", SI(rate, ""), f, SI(float64(b), "B"), el.Truncate(time.Second/10))
			}
		}
	}()
	return p
}

// Stop erases the line and stops drawing.
func (p *Progress) Stop() {
	if p == nil {
		return
	}
	close(p.stop)
	<-p.done
}
