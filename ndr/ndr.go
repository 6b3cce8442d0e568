// Package ndr searches for a path's RFC 2544 throughput: the highest rate
// at which a receiver sees no more loss than allowed (NDR, the
// non-drop rate, with a loss of 0; a partial-drop rate otherwise).
//
// The search is a binary search between a lower and an upper rate, each
// step a trial of fixed length run by a caller-supplied function. Run is
// the whole test in one call, what wpg ndr runs: per frame size a search
// whose trials a Harness runs, sending with package job and receiving
// with job.Receive on the far end of a veth pair of its own (or of two
// interfaces the caller names). A trial passes when its loss ratio is at most the
// allowed one. The search stops when the bracket is narrower than the
// resolution, after a bounded number of trials, or when ctx ends. The
// figure it reports is the rate the sender achieved in the best passing
// trial, not the rate it asked for, so a sender that could not keep up
// never inflates the result.
package ndr

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// Config bounds a search.
type Config struct {
	// MaxRate is the highest rate tried (frames/s), the first trial; > 0.
	MaxRate float64
	// MinRate is the lowest rate tried (frames/s); 0 means MaxRate/1000.
	MinRate float64
	// Resolution ends the search once the bracket between the highest
	// passing and the lowest failing rate is at most this share of the
	// upper one (0 means 0.01: 1 %).
	Resolution float64
	// Loss is the largest acceptable loss ratio, in [0, 1): 0 asks for no
	// loss at all.
	Loss float64
	// Trial is each trial's sending time (0 means 10 s, RFC 2544's
	// shortest suggested).
	Trial time.Duration
	// Warmup, if > 0, is a first trial at MinRate whose outcome is not
	// counted: it primes what learns from traffic (ARP and forwarding
	// tables of a device, rings and caches of the host).
	Warmup time.Duration
	// MaxTrials bounds the number of counted trials (0 means 32).
	MaxTrials int
}

// Outcome is what one trial measured.
type Outcome struct {
	// Sent is the frames the sender sent, Received the distinct intact
	// frames the receiver counted.
	Sent     uint64 `json:"sent"`
	Received uint64 `json:"received"`
	// AchievedPPS is the sender's achieved rate (frames/s).
	AchievedPPS float64 `json:"achieved_pps"`
	// LatencyP50Ns and LatencyP99Ns are the one-way latency the receiver
	// measured, JitterNs its RFC 3550 interarrival jitter (ns; 0: not
	// measured).
	LatencyP50Ns int64 `json:"latency_p50_ns,omitempty"`
	LatencyP99Ns int64 `json:"latency_p99_ns,omitempty"`
	JitterNs     int64 `json:"jitter_ns,omitempty"`
}

// TrialFunc runs one trial: send at rate frames/s for d and return what
// was sent and received. An error ends the search.
type TrialFunc func(ctx context.Context, rate float64, d time.Duration) (Outcome, error)

// Trial is one trial of a search.
type Trial struct {
	// Rate is the rate asked for (frames/s).
	Rate float64 `json:"rate_pps"`
	Outcome
	// LossRatio is (Sent − Received) / Sent (0 when nothing was sent).
	LossRatio float64 `json:"loss_ratio"`
	// Pass says whether LossRatio was within Config.Loss.
	Pass bool `json:"pass"`
	// Warmup marks the uncounted warm-up trial.
	Warmup bool `json:"warmup,omitempty"`
}

// Result is a finished search.
type Result struct {
	// ThroughputPPS is the achieved rate of the best passing trial
	// (frames/s); 0 when no trial passed, even at MinRate.
	ThroughputPPS float64 `json:"throughput_pps"`
	// Limited says the search hit MaxRate: the path may go faster than
	// the search asked.
	Limited bool `json:"limited_by_max_rate"`
	// SenderLimited says the best passing trial's sender fell short of
	// the rate asked by more than the resolution, without loss: the
	// figure is where the sender ran out, or where the path pushed back
	// (a shaper, a full queue that makes the sender wait rather than
	// drop); the non-drop rate is at least that.
	SenderLimited bool `json:"limited_by_sender"`
	// Converged says the bracket closed to the resolution (false: the
	// trial budget ran out first, or nothing passed).
	Converged bool `json:"converged"`
	// Trials are all trials in the order run.
	Trials []Trial `json:"trials"`
}

// defaultTrial is a trial's sending time when Config.Trial is 0: RFC
// 2544's shortest suggested.
const defaultTrial = 10 * time.Second

func (c Config) withDefaults() (Config, error) {
	if !(c.MaxRate > 0) || math.IsInf(c.MaxRate, 0) {
		return c, fmt.Errorf("ndr: maximum rate %v: give a rate above 0", c.MaxRate)
	}
	if c.MinRate == 0 {
		c.MinRate = c.MaxRate / 1000
	}
	if !(c.MinRate > 0) || c.MinRate > c.MaxRate {
		return c, fmt.Errorf("ndr: minimum rate %v: give a rate above 0 and at most the maximum %v", c.MinRate, c.MaxRate)
	}
	if c.Resolution == 0 {
		c.Resolution = 0.01
	}
	if !(c.Resolution > 0 && c.Resolution < 1) {
		return c, fmt.Errorf("ndr: resolution %v: give a share between 0 and 1, e.g. 0.01 for 1 %%", c.Resolution)
	}
	if !(c.Loss >= 0 && c.Loss < 1) {
		return c, fmt.Errorf("ndr: loss %v: give a ratio from 0 (no loss) to below 1", c.Loss)
	}
	if c.Trial == 0 {
		c.Trial = defaultTrial
	}
	if c.Trial < 0 || c.Warmup < 0 {
		return c, errors.New("ndr: trial and warm-up durations must not be negative")
	}
	if c.MaxTrials == 0 {
		c.MaxTrials = 32
	}
	if c.MaxTrials < 1 || c.MaxTrials > 1000 {
		return c, fmt.Errorf("ndr: %d trials: give 1 to 1000", c.MaxTrials)
	}
	return c, nil
}

// judge is the trial at rate with outcome o: its loss ratio, and whether
// it passed (frames sent, and at most loss of them lost).
func judge(loss, rate float64, o Outcome, warm bool) Trial {
	t := Trial{Rate: rate, Outcome: o, Warmup: warm}
	if o.Sent > 0 {
		lost := o.Sent - min(o.Received, o.Sent)
		t.LossRatio = float64(lost) / float64(o.Sent)
	}
	t.Pass = o.Sent > 0 && t.LossRatio <= loss
	return t
}

// Search runs the search. On an error (a trial's, or ctx's) it returns
// the trials so far with it.
func Search(ctx context.Context, cfg Config, run TrialFunc) (Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	var res Result
	try := func(rate float64, d time.Duration, warm bool) (Trial, error) {
		if err := ctx.Err(); err != nil {
			return Trial{}, err
		}
		o, err := run(ctx, rate, d)
		if err != nil {
			return Trial{}, fmt.Errorf("ndr: trial at %.0f frames/s: %w", rate, err)
		}
		t := judge(cfg.Loss, rate, o, warm)
		res.Trials = append(res.Trials, t)
		return t, nil
	}
	if cfg.Warmup > 0 {
		if _, err := try(cfg.MinRate, cfg.Warmup, true); err != nil {
			return res, err
		}
	}
	best := func(t Trial) {
		if t.Pass && t.AchievedPPS > res.ThroughputPPS {
			res.ThroughputPPS = t.AchievedPPS
			res.SenderLimited = t.AchievedPPS < t.Rate*(1-cfg.Resolution)
		}
	}
	lo, hi := 0.0, cfg.MaxRate // lo passed (0: none yet), hi failed or untried
	t, err := try(cfg.MaxRate, cfg.Trial, false)
	if err != nil {
		return res, err
	}
	if t.Pass {
		best(t)
		res.Limited, res.Converged = true, true
		return res, nil
	}
	for n := 1; n < cfg.MaxTrials; n++ {
		var rate float64
		if lo == 0 {
			// nothing passed yet: halve, but try the floor before giving up
			rate = max(hi/2, cfg.MinRate)
			if hi <= cfg.MinRate {
				return res, nil // failed at the floor: no throughput
			}
		} else {
			if hi-lo <= cfg.Resolution*hi {
				res.Converged = true
				return res, nil
			}
			rate = (lo + hi) / 2
		}
		t, err := try(rate, cfg.Trial, false)
		if err != nil {
			return res, err
		}
		if t.Pass {
			lo = rate
			best(t)
		} else {
			hi = rate
		}
	}
	res.Converged = lo > 0 && hi-lo <= cfg.Resolution*hi
	return res, nil
}
