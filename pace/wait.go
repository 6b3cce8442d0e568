package pace

import (
	"fmt"

	"github.com/wpg-dev/wpg/internal/inputerr"
)

// WaitMode says how a pacer waits for a deadline.
type WaitMode int

const (
	// Hybrid sleeps until shortly before the deadline (the sleep is
	// shortened by the learned oversleep plus a safety margin) and spins
	// the rest. It is the default: its lateness is close to Spin's while at
	// low rates it uses a small fraction of a core; at rates whose frame
	// interval is shorter than a sleep it simply spins.
	Hybrid WaitMode = iota
	// Spin busy-waits reading the clock: the least lateness, one full core
	// per worker whatever the rate.
	Spin
	// Sleep only sleeps (shortened by the learned oversleep, never
	// spinning): the least CPU, lateness of the order of the scheduler's
	// wake-up latency (tens of µs on a VM).
	Sleep
)

var waitWords = words[WaitMode]{{"hybrid", Hybrid}, {"spin", Spin}, {"sleep", Sleep}}

// ParseWait parses --wait: "spin", "sleep" or "hybrid" ("" = hybrid).
func ParseWait(s string) (WaitMode, error) {
	if w, ok := waitWords.parse(s); ok {
		return w, nil
	}
	const want = "hybrid (sleep then spin the last microseconds; the default), spin (busy-wait: least lateness, one core) or sleep (least CPU)"
	return Hybrid, inputerr.Worded(nil, fmt.Sprintf("wait mode %q: want %s", s, want), "is not a wait mode", "use "+want)
}

// String returns "hybrid", "spin" or "sleep".
func (w WaitMode) String() string { return waitWords.name(w) }
