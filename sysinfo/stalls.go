package sysinfo

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/wpg-dev/wpg/internal/sys"
)

// CPUStalls is what a thread that spins on one CPU, reading the clock
// without pause, saw taken away from it: every gap between two clock reads
// of at least the probe's threshold is a stall (an interrupt, another
// task, the hypervisor running something else). It bounds what any
// precise pacing can achieve on that CPU: a frame due during a stall
// leaves after it.
type CPUStalls struct {
	CPU     int     `json:"cpu"`
	Seconds float64 `json:"seconds"`
	// ThresholdNs is the shortest gap counted as a stall.
	ThresholdNs int64 `json:"threshold_ns"`
	Stalls      int   `json:"stalls"`
	// PerSecond is Stalls over Seconds.
	PerSecond float64 `json:"per_second"`
	// LostShare is the share of the time the spinning thread lost in
	// stalls (0..1).
	LostShare float64 `json:"lost_share"`
	// Percentiles and maximum of the stall durations (ns).
	P50Ns int64 `json:"p50_ns"`
	P99Ns int64 `json:"p99_ns"`
	MaxNs int64 `json:"max_ns"`
	// PeriodNs is the interval (100 µs to 5 ms) at which stalls of at
	// least 10 µs recur, when at least half of them are followed by
	// another one period later (±5 %); zero when they come irregularly.
	PeriodNs int64 `json:"period_ns,omitempty"`
}

// maxStallSamples bounds the memory one CPU's probe uses; beyond it
// stalls are still counted and timed but not kept for the percentiles.
const maxStallSamples = 1 << 20

// ProbeStalls spins for d on each CPU in cpus in turn (one locked, pinned
// thread) and reports the stalls it saw, gaps of at least threshold
// between consecutive reads of the monotonic clock. It takes len(cpus)×d.
func ProbeStalls(cpus []int, d, threshold time.Duration) ([]CPUStalls, error) {
	return ProbeStallsContext(context.Background(), cpus, d, threshold)
}

// ProbeStallsContext is ProbeStalls that ends when ctx is done (Ctrl-C):
// the CPU being probed stops within a millisecond, with what it saw so
// far, and the CPUs not yet probed are left out; the error is then the
// context's. A probe of D on N CPUs otherwise runs N×D whatever signal
// comes.
func ProbeStallsContext(ctx context.Context, cpus []int, d, threshold time.Duration) ([]CPUStalls, error) {
	if d <= 0 || threshold <= 0 {
		return nil, fmt.Errorf("stall probe: duration %v and threshold %v must be positive", d, threshold)
	}
	out := make([]CPUStalls, 0, len(cpus))
	var stop atomic.Bool
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()
	for _, cpu := range cpus {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		type result struct {
			s   CPUStalls
			err error
		}
		ch := make(chan result, 1)
		go func() {
			// The thread is left locked: it exits with the goroutine,
			// so its CPU binding never leaks to other goroutines.
			if err := sys.PinThread(cpu); err != nil {
				ch <- result{err: err}
				return
			}
			ch <- result{s: spin(&stop, cpu, d, threshold)}
		}()
		r := <-ch
		if r.err != nil {
			return out, fmt.Errorf("stall probe: %w", r.err)
		}
		out = append(out, r.s)
	}
	return out, ctx.Err()
}

// spin is the probe loop for one CPU; it ends early once stop is set
// (looked at every 4096 clock reads, well under a millisecond).
func spin(stop *atomic.Bool, cpu int, d, threshold time.Duration) CPUStalls {
	th := threshold.Nanoseconds()
	at := make([]int64, 0, 4096)  // start of each kept stall
	dur := make([]int64, 0, 4096) // its length
	var n int
	var lost, longest int64
	start := sys.NanotimeNs()
	end := start + d.Nanoseconds()
	last := start
	for i := 0; last < end; i++ {
		if i&4095 == 4095 && stop.Load() {
			break
		}
		now := sys.NanotimeNs()
		if g := now - last; g >= th {
			n++
			lost += g
			longest = max(longest, g)
			if len(dur) < maxStallSamples {
				at = append(at, last)
				dur = append(dur, g)
			}
		}
		last = now
	}
	return summarise(cpu, last-start, th, n, lost, longest, at, dur)
}

// summarise turns the raw stalls of one probe into CPUStalls.
func summarise(cpu int, spanNs, th int64, n int, lost, longest int64, at, dur []int64) CPUStalls {
	s := CPUStalls{CPU: cpu, Seconds: float64(spanNs) / 1e9, ThresholdNs: th, Stalls: n, MaxNs: longest}
	if spanNs > 0 {
		s.PerSecond = float64(n) / s.Seconds
		s.LostShare = float64(lost) / float64(spanNs)
	}
	if len(dur) > 0 {
		sorted := slices.Clone(dur)
		slices.Sort(sorted)
		s.P50Ns = sorted[len(sorted)/2]
		s.P99Ns = sorted[len(sorted)*99/100]
	}
	s.PeriodNs = period(at, dur, 10_000)
	return s
}

// period looks for a period among the stalls at least minNs long: for
// each of them, the gaps to the later ones within maxPeriod are binned
// (10 µs bins, from 100 µs on); the shortest neighbourhood of three bins
// that is a local maximum holding at least half as many gaps as there are
// stalls gives the candidate, the median of the gaps in it. It is the period if
// at least half of those stalls are followed by another within 5 % of it
// (other stalls in between do not matter); else period returns 0.
func period(at, dur []int64, minNs int64) int64 {
	const bin, minPeriod, maxPeriod = 10_000, 100_000, 5_000_000
	var big []int64
	for i, t := range at {
		if dur[i] >= minNs {
			big = append(big, t)
		}
	}
	if len(big) < 8 {
		return 0
	}
	var counts [maxPeriod/bin + 2]int
	for i, t := range big {
		for _, u := range big[i+1:] {
			d := u - t
			if d >= maxPeriod {
				break
			}
			if d >= minPeriod {
				counts[d/bin]++
			}
		}
	}
	// the shortest local maximum that at least half the stalls could
	// belong to (multiples of the period collect as many pairs)
	hood := func(b int) int { return counts[b-1] + counts[b] + counts[b+1] }
	best := 0
	for b := minPeriod / bin; b < len(counts)-2; b++ {
		if n := hood(b); 2*n >= len(big) && n >= hood(b-1) && n >= hood(b+1) {
			best = b
			break
		}
	}
	if best == 0 {
		return 0
	}
	lo, hi := int64(best-1)*bin, int64(best+2)*bin
	var in []int64
	for i, t := range big {
		for _, u := range big[i+1:] {
			if d := u - t; d >= hi {
				break
			} else if d >= lo {
				in = append(in, d)
			}
		}
	}
	slices.Sort(in)
	p := in[len(in)/2]
	followed := 0
	for i, t := range big {
		for _, u := range big[i+1:] {
			if d := u - t; d > p+p/20 {
				break
			} else if d >= p-p/20 {
				followed++
				break
			}
		}
	}
	if 2*followed < len(big) {
		return 0
	}
	return p
}

// WriteStalls writes one line per probed CPU.
func WriteStalls(w io.Writer, stalls []CPUStalls) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "cpu\tstalls/s\ttime lost\tp50\tp99\tmax\trecurring")
	for _, s := range stalls {
		if s.Stalls == 0 {
			// No stall: no distribution, no period.
			fmt.Fprintf(tw, "%d\t0 (≥ %v)\t0.00 %%\t-\t-\t-\tnone\n", s.CPU, time.Duration(s.ThresholdNs))
			continue
		}
		rec := "irregular"
		if s.PeriodNs > 0 {
			rec = "every " + time.Duration(s.PeriodNs).Round(time.Microsecond).String()
		}
		fmt.Fprintf(tw, "%d\t%.0f (≥ %v)\t%.2f %%\t%v\t%v\t%v\t%s\n", s.CPU, s.PerSecond, time.Duration(s.ThresholdNs),
			100*s.LostShare, time.Duration(s.P50Ns), time.Duration(s.P99Ns), time.Duration(s.MaxNs), rec)
	}
	_ = tw.Flush()
}
