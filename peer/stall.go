package peer

import (
	"context"
	"time"
)

// StallGrace is how long a sender keeps waiting, once the run has stopped,
// for a receiver that is still there but takes nothing (stopped, hung).
const StallGrace = 2 * time.Second

// Stall tells when a sender waiting on its receiver should give up: once
// Ctx is cancelled (the run stopped) and the waited-on quantity has not
// changed for StallGrace. Until the run stops it waits as long as the
// receiver lives: a slow receiver is back-pressure, not an error.
type Stall struct {
	Ctx   context.Context
	last  uint64
	since time.Time
}

// Still records the current value of what is waited on (bytes left,
// frames pending) and reports whether the wait should end.
func (s *Stall) Still(v uint64) bool {
	if s.Ctx == nil || s.Ctx.Err() == nil {
		s.since = time.Time{}
		return false
	}
	now := time.Now()
	if s.since.IsZero() || v != s.last {
		s.last, s.since = v, now
		return false
	}
	return now.Sub(s.since) >= StallGrace
}
