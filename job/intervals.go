package job

import (
	"time"

	"github.com/wpg-dev/wpg/report"
)

// Intervals samples the run every period until it ends and returns its
// intervals, the last one closed with the report's totals so that they sum
// to them (the report's intervals[]); nil when the run has no report (no
// worker could open its backend) or period is not positive. each, when
// not nil, is called with every interval as it closes, the last ones once
// the run has ended (wpg send --interval prints them as lines). It returns
// when the run has ended.
//
// Samples fall on multiples of the period on the run's own clock (from its
// first frame), not on a ticker started before it: that closed the first
// interval early (0.07 s of a 0.1 s period) and every other one off the
// period's multiples. The sample due at the run's planned end (Duration)
// or after it is the end itself: the report's totals close the last
// interval, instead of a sample a hair before the end leaving a last
// interval of a few frames over microseconds (a rate that looks like a
// collapse at the end).
func (r *Run) Intervals(period time.Duration, each func(report.Interval)) []report.Interval {
	var at func(report.Interval, Snapshot)
	if each != nil {
		at = func(in report.Interval, _ Snapshot) { each(in) }
	}
	return r.IntervalsAt(period, at)
}

// IntervalsAt is Intervals whose callback also gets the snapshot that
// closed each interval (cumulative: Snapshot.LatenessHistogramSince of two
// gives an interval's lateness histogram); the intervals the end closes
// get the run's last snapshot. When the run ended at its last sample, the
// report's totals are added to the last interval already handed over,
// and no callback says so: the run's last snapshot is that interval's
// end then.
func (r *Run) IntervalsAt(period time.Duration, each func(report.Interval, Snapshot)) []report.Interval {
	if period <= 0 {
		<-r.done
		return nil
	}
	iv := report.Intervals{Layer: r.pr.layer}
	var prev Snapshot
	duration := r.pr.spec.Duration
	next := period
	t := time.NewTimer(period)
	defer t.Stop()
watch:
	for duration <= 0 || next < duration {
		select {
		case <-r.done:
			break watch
		case <-t.C:
		}
		if el := r.Elapsed(); el < next {
			t.Reset(next - el)
			continue
		}
		s := r.Snapshot()
		in, ok := iv.Add(s.Sample(prev))
		prev = s
		if ok && each != nil {
			each(in, s)
		}
		for next <= s.Elapsed {
			next += period
		}
		t.Reset(next - s.Elapsed)
	}
	rep := r.Report()
	if rep == nil {
		return nil
	}
	n := len(iv.List())
	end := r.Snapshot()
	total := end.Sample(prev)
	total.Elapsed, total.Frames, total.Bytes = time.Duration(rep.Seconds*float64(time.Second)), rep.Frames, rep.Bytes
	list := iv.Finish(total)
	if each != nil {
		for _, in := range list[min(n, len(list)):] {
			each(in, end)
		}
	}
	return list
}
