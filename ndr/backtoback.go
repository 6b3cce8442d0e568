package ndr

import (
	"context"
	"fmt"
)

// RFC 2544 section 26.4, back-to-back frames: the longest burst of frames
// at the path's maximum frame rate (no gap beyond the minimum) that the
// device forwards without losing one, found by a binary search over the
// burst length, each step a burst sent by the caller.

// BurstConfig bounds a back-to-back search.
type BurstConfig struct {
	// MaxBurst is the longest burst tried, the first trial (frames, > 0).
	MaxBurst uint64
	// Resolution ends a search once the bracket between the longest
	// passing and the shortest failing burst is at most this share of
	// the failing one (0 means 0.01), or a frame.
	Resolution float64
	// Repeat is how often the search runs (0 means 1; RFC 2544 asks for
	// 50): the result is the mean of the lengths found, with each in
	// Bursts.
	Repeat int
	// MaxTrials bounds the trials of one search (0 means 32).
	MaxTrials int
}

// BurstFunc sends one burst of frames back to back and returns what was
// sent and received (its AchievedPPS is the burst's rate). An error ends
// the search.
type BurstFunc func(ctx context.Context, frames uint64) (Outcome, error)

// BurstTrial is one burst of a back-to-back search.
type BurstTrial struct {
	// Frames is the burst's length asked for.
	Frames uint64 `json:"burst"`
	Outcome
	// Pass says that every frame sent arrived.
	Pass bool `json:"pass"`
}

// BurstResult is a finished back-to-back search.
type BurstResult struct {
	// BurstFrames is the mean of the searches' longest bursts without
	// loss (frames; 0 when even a single frame was lost); Bursts each.
	BurstFrames float64  `json:"burst_frames"`
	Bursts      []uint64 `json:"bursts"`
	// Limited says a search passed at MaxBurst: the device takes longer
	// bursts than were tried.
	Limited bool `json:"limited_by_max_burst"`
	// Trials are every burst sent, in order.
	Trials []BurstTrial `json:"trials"`
}

func (c BurstConfig) withDefaults() (BurstConfig, error) {
	if c.MaxBurst == 0 {
		return c, fmt.Errorf("ndr: back-to-back: give a longest burst above 0 frames")
	}
	if c.Resolution == 0 {
		c.Resolution = 0.01
	}
	if !(c.Resolution > 0 && c.Resolution < 1) {
		return c, fmt.Errorf("ndr: back-to-back resolution %v: give a share between 0 and 1", c.Resolution)
	}
	if c.Repeat == 0 {
		c.Repeat = 1
	}
	if c.MaxTrials == 0 {
		c.MaxTrials = 32
	}
	if c.Repeat < 1 || c.Repeat > 1000 || c.MaxTrials < 1 || c.MaxTrials > 1000 {
		return c, fmt.Errorf("ndr: back-to-back: repeat %d and trials %d: give 1 to 1000 each", c.Repeat, c.MaxTrials)
	}
	return c, nil
}

// BackToBack runs the back-to-back search Repeat times. On an error (a
// burst's, or ctx's) it returns what was found so far with it.
func BackToBack(ctx context.Context, cfg BurstConfig, burst BurstFunc) (BurstResult, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return BurstResult{}, err
	}
	var res BurstResult
	try := func(n uint64) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		o, err := burst(ctx, n)
		if err != nil {
			return false, fmt.Errorf("ndr: burst of %d frames: %w", n, err)
		}
		t := BurstTrial{Frames: n, Outcome: o, Pass: o.Sent > 0 && o.Received >= o.Sent}
		res.Trials = append(res.Trials, t)
		return t.Pass, nil
	}
	var sum float64
	for range cfg.Repeat {
		lo, hi := uint64(0), cfg.MaxBurst // lo passed (0: none), hi failed
		pass, err := try(hi)
		if err != nil {
			return res, err
		}
		if pass {
			lo, res.Limited = hi, true
		}
		for n := 1; !pass && n < cfg.MaxTrials && hi-lo > max(1, uint64(cfg.Resolution*float64(hi))); n++ {
			mid := lo + (hi-lo)/2
			ok, err := try(mid)
			if err != nil {
				return res, err
			}
			if ok {
				lo = mid
			} else {
				hi = mid
			}
		}
		res.Bursts = append(res.Bursts, lo)
		sum += float64(lo)
		res.BurstFrames = sum / float64(len(res.Bursts))
	}
	return res, nil
}
