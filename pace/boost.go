package pace

import (
	"fmt"
	"time"

	"github.com/wpg-dev/wpg/internal/inputerr"
)

// Boost says whether a pacer raises its thread's priority while it
// sleeps (Config.WakeBoost).
type Boost int

const (
	// BoostAuto boosts where the process is permitted to, silently not
	// otherwise (the report says which).
	BoostAuto Boost = iota
	// BoostOff never boosts.
	BoostOff
	// BoostOn boosts, and Setup fails without the permission.
	BoostOn
)

const (
	// boostPriority is the SCHED_FIFO priority of a wake boost: the
	// lowest, above every normal thread and below every other real-time
	// one.
	boostPriority = 1
	// boostMinSleep: a wake boost is taken only for sleeps at least this
	// long and at least boostSleepRatio times the time spun after the
	// wake, so a boosted thread runs ahead of others for at most about a
	// fifth of the time.
	boostMinSleep   = 200 * time.Microsecond
	boostSleepRatio = 4
	// boostMaxWork: a caller whose work between grants (its moving
	// average) exceeds this is not boosted; the work would run at the
	// real-time priority too.
	boostMaxWork = 50 * time.Microsecond
)

var boostWords = words[Boost]{{"auto", BoostAuto}, {"on", BoostOn}, {"off", BoostOff}}

// ParseBoost parses --wake-boost: "auto" (or ""), "on" or "off".
func ParseBoost(s string) (Boost, error) {
	if b, ok := boostWords.parse(s); ok {
		return b, nil
	}
	const want = "auto (SCHED_FIFO while sleeping where permitted; the default), on or off"
	return BoostAuto, inputerr.Worded(nil, fmt.Sprintf("wake boost %q: want %s", s, want), "is not a wake boost", "use "+want)
}

// String returns "auto", "on" or "off".
func (b Boost) String() string { return boostWords.name(b) }

// boostApplies says whether the wake boost is for this pacer: a paced
// hybrid wait without --rt-priority, the boost not turned off.
func (p *Pacer) boostApplies() bool {
	return !p.unlimited && p.wait == Hybrid && p.priority == 0 && p.boost != BoostOff
}

// setupBoost checks once whether the thread may switch to SCHED_FIFO.
func (p *Pacer) setupBoost() error {
	if !p.boostApplies() {
		return nil
	}
	if err := p.setRealtime(true); err != nil {
		if p.boost == BoostOn {
			return inputerr.WithFix(fmt.Errorf("pacer: --wake-boost on: %w: SCHED_FIFO needs CAP_SYS_NICE (run as root or setcap cap_sys_nice+ep on wpg) or RLIMIT_RTPRIO ≥ 1 (ulimit -r, LimitRTPRIO=); or use --wake-boost auto", err), "grant CAP_SYS_NICE or RLIMIT_RTPRIO")
		}
		p.boostWhy = "off: SCHED_FIFO not permitted (needs CAP_SYS_NICE or RLIMIT_RTPRIO ≥ 1)"
		return nil
	}
	if err := p.setRealtime(false); err != nil {
		return fmt.Errorf("pacer: back to the normal scheduler: %w", err)
	}
	p.boostOK = true
	return nil
}

// boostSleep raises the thread before a sleep until target (now is the
// clock) if the sleep is long enough against the spin that follows it
// (lead) and the caller's work between grants is short.
func (p *Pacer) boostSleep(now, target, lead int64) {
	if !p.boostOK || p.boosted || p.workNs > boostMaxWork.Nanoseconds() {
		return
	}
	if d := target - now; d < boostMinSleep.Nanoseconds() || d < boostSleepRatio*lead {
		return
	}
	if p.setRealtime(true) == nil {
		p.boosted = true
	}
}

// unboost returns the thread to the normal scheduler.
func (p *Pacer) unboost() {
	if p.boosted {
		p.boosted = false
		_ = p.setRealtime(false)
	}
}

// Done ends a wake boost that is still in force; the worker calls it
// after its last grant (also when it stopped early).
func (p *Pacer) Done() { p.unboost() }

// WakeBoost describes the wake boost for the report: "" when it does not
// apply (unlimited, spin, --rt-priority, or off), else how often it was
// used, that it was not needed (no sleep long enough), or why not.
func (p *Pacer) WakeBoost() string {
	switch {
	case !p.boostApplies():
		return ""
	case p.boostWhy != "":
		return p.boostWhy
	case !p.boostOK:
		return ""
	case p.boosts == 0:
		return fmt.Sprintf("not needed: permitted, but no wait was long enough (%v or more) to sleep under SCHED_FIFO", boostMinSleep)
	}
	return fmt.Sprintf("on: SCHED_FIFO %d during %d sleeps", boostPriority, p.boosts)
}
