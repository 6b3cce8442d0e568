package pace

import (
	"fmt"
	"strings"
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

// ParseWait parses --wait: "spin", "sleep" or "hybrid" ("" = hybrid).
func ParseWait(s string) (WaitMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "hybrid":
		return Hybrid, nil
	case "spin":
		return Spin, nil
	case "sleep":
		return Sleep, nil
	}
	return Hybrid, fmt.Errorf("wait mode %q: want hybrid (sleep then spin the last microseconds; the default), spin (busy-wait: least lateness, one core) or sleep (least CPU)", s)
}

// String returns "hybrid", "spin" or "sleep".
func (w WaitMode) String() string {
	switch w {
	case Spin:
		return "spin"
	case Sleep:
		return "sleep"
	}
	return "hybrid"
}
