package pace

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/wpg-dev/wpg/internal/hist"
)

// Stats describes how well a pacer kept its schedule. Lateness is how late
// each grant was against its deadline (the due time of the first frame it
// released); LatenessP50Ns and LatenessP99Ns are its percentiles, as in
// the report's lateness_p50_ns and lateness_p99_ns.
type Stats struct {
	// FPS is the target rate (frames/s), summed over merged pacers; 0 when
	// unlimited.
	FPS float64
	// Grants is the number of grants that waited for a deadline (the rest
	// of a burst is not counted again).
	Grants int64
	// Frames is the number of frames granted (less any returned).
	Frames int64
	// Behind counts grants that found more than a burst overdue: the
	// caller (the path) was late.
	Behind int64
	// Forgiven counts the frame intervals the schedule skipped after a
	// stall longer than the 10 ms catch-up window, rather than repay them
	// in a burst. No frame is dropped: the frames after the stall go out
	// that much later (a --duration run holds that many fewer). Nonzero
	// means the thread did not run or the path blocked.
	Forgiven int64
	// LagMaxNs is the furthest the sender fell behind its schedule: how
	// long the oldest unsent frame was overdue at a grant. It differs from
	// the lateness, which is measured against each grant's own deadline
	// (while catching up, the deadline of the next owed frame): several
	// stalls in a row add up to one lag.
	LagMaxNs int64

	LatenessMaxNs  int64
	LatenessMeanNs int64
	LatenessP50Ns  int64
	LatenessP99Ns  int64

	latSum int64
	hist   *hist.Hist
}

// Stats returns a snapshot of the pacer's statistics. Call it from the
// goroutine that calls Grant or after that goroutine stopped.
func (p *Pacer) Stats() Stats {
	h := p.hist.Clone()
	return finish(Stats{
		FPS: p.fps, Grants: p.grants, Frames: p.frames, Behind: p.behind, Forgiven: p.forgiven,
		LagMaxNs: p.lagMax, LatenessMaxNs: p.latMax, latSum: p.latSum, hist: h,
	})
}

func finish(s Stats) Stats {
	if s.Grants > 0 {
		s.LatenessMeanNs = s.latSum / s.Grants
	}
	s.LatenessP50Ns = s.hist.Quantile(50)
	s.LatenessP99Ns = s.hist.Quantile(99)
	return s
}

// Quantile returns the lateness (ns) at quantile q in [0, 100].
func (s Stats) Quantile(q float64) int64 {
	return s.hist.Quantile(q)
}

// MarshalHistogram returns the lateness histogram behind the percentiles
// in the JSON form of wpg's histograms (bounds and non-zero buckets), as a
// report carries it (lateness_histogram) for an exact merge.
func (s Stats) MarshalHistogram() ([]byte, error) {
	if s.hist == nil {
		return nil, nil
	}
	return json.Marshal(s.hist)
}

// MergeStats merges per-worker statistics: counts and target rates add,
// the maximum is the largest, and the percentiles come from the merged
// histograms.
func MergeStats(s ...Stats) Stats {
	m := Stats{hist: newHist()}
	for _, x := range s {
		m.FPS += x.FPS
		m.Grants += x.Grants
		m.Frames += x.Frames
		m.Behind += x.Behind
		m.Forgiven += x.Forgiven
		m.latSum += x.latSum
		m.LatenessMaxNs = max(m.LatenessMaxNs, x.LatenessMaxNs)
		m.LagMaxNs = max(m.LagMaxNs, x.LagMaxNs)
		m.hist.Merge(x.hist)
	}
	return finish(m)
}

// Notes explains, in plain sentences for the report, where a pacer lost
// time: grants that found the sender behind schedule, and the intervals
// the schedule skipped after stalls longer than the 10 ms catch-up window.
// It returns nil when the schedule was kept.
func (s Stats) Notes() []string {
	var notes []string
	if s.Forgiven > 0 {
		span := ""
		if s.FPS > 0 {
			span = fmt.Sprintf(" (%.1f ms)", 1e3*float64(s.Forgiven)/s.FPS)
		}
		notes = append(notes, fmt.Sprintf("the sender fell up to %v behind its schedule, more than the %v it catches up on (the thread did not run or the path blocked): the schedule skipped %d frame intervals%s instead of sending them in a burst; no frame was dropped, those after the stall went out that much later",
			time.Duration(s.LagMaxNs).Round(time.Microsecond), catchUpWindow, s.Forgiven, span))
	}
	if s.Behind > 0 && s.Grants > 0 {
		notes = append(notes, fmt.Sprintf("%.1f %% of grants found the sender more than a burst behind schedule (at most %v) and caught up: at %.2f× the rate while under %v behind, at most %.1f× beyond",
			100*float64(s.Behind)/float64(s.Grants), time.Duration(s.LagMaxNs).Round(time.Microsecond), gentleSpeed, gentleDebt, catchUpSpeed))
	}
	return notes
}
