package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wpg-dev/wpg/backend"
)

// Stop says why a run ended.
type Stop string

// Reasons a run ends.
const (
	StopCount    Stop = "count"    // --count reached
	StopSource   Stop = "source"   // every stream reached its template count
	StopDuration Stop = "duration" // --duration elapsed
	StopSignal   Stop = "signal"   // SIGINT, SIGTERM or SIGHUP (context cancelled)
	StopError    Stop = "error"    // a worker failed
)

// WorkerResult is one worker's share of the run.
type WorkerResult struct {
	Worker  int
	CPU     int // the pinned CPU, -1 when not pinned
	Frames  uint64
	Bytes   uint64
	Seconds float64
	// CPUSeconds is the CPU time the worker's thread used.
	CPUSeconds float64
	// EmptyReserves counts Reserve calls that found the path full.
	EmptyReserves uint64
	Info          backend.Info
	Plan          string
	PlanDetail    string
	Pacer         Pacer
	PeerReport    []byte // the receiver's result (backend.PeerReporter), nil without one
	// StreamFrames are the frames of each stream this worker rendered
	// (StreamCounter), nil when the source does not count them.
	StreamFrames []uint64
	// StreamDatagrams are the whole datagrams among them (fragments count
	// once, with their last); nil as StreamFrames is.
	StreamDatagrams []uint64
	// StreamBytes are the bytes of StreamFrames' frames, whole; nil as
	// StreamFrames is.
	StreamBytes []uint64
	// StreamLateness is, for each stream that keeps its own schedule, how
	// late its frames were (StreamLatenessCounter); nil when no stream
	// keeps one.
	StreamLateness []StreamLateness
	Err            error

	// end is when the worker's sending ended (its last Flush returned):
	// the run's Seconds ends at the latest, before the senders' Close.
	end time.Time
	// first is when its first frames were granted (a paced worker's
	// first due time), zero when it sent none.
	first time.Time
}

// Result is the outcome of a run.
type Result struct {
	Workers []WorkerResult
	Frames  uint64
	Bytes   uint64
	Seconds float64
	// Lead is the part of Seconds before the first frame could go: from
	// the run's start to the earliest worker's first grant, when a paced
	// worker's schedule begins (the threads waking, a pacer's first
	// clock read). A short paced run measures its frames due from there
	// (2 frames at 1 kpps took 1.14 ms of Seconds, 0.14 ms of it lead).
	Lead float64
	// Start is when the workers were released to send: where Seconds
	// begins, on the wall clock (a segmented run's reports merge over
	// the union of their time spans).
	Start time.Time
	Stop  Stop
	// MeanFrame and MaxFrame come from worker 0's source.
	MeanFrame float64
	MaxFrame  int
}

// Err returns the workers' errors, if any, joined. Workers that failed
// with the same message (every worker opening the same missing
// interface) are given once, as one *WorkerError naming them all.
func (r *Result) Err() error {
	var errs []error
	for _, w := range r.Workers {
		if w.Err == nil {
			continue
		}
		var we *WorkerError
		if errors.As(w.Err, &we) && len(errs) > 0 {
			if prev, ok := errs[len(errs)-1].(*WorkerError); ok && prev.Err.Error() == we.Err.Error() && (prev.Frames < 0) == (we.Frames < 0) {
				g := *prev
				g.Others = append(append([]int(nil), prev.Others...), we.Worker)
				g.Frames += max(we.Frames, 0)
				errs[len(errs)-1] = &g
				continue
			}
		}
		errs = append(errs, w.Err)
	}
	return errors.Join(errs...)
}

// WorkerError is a worker's failure: which worker, what went wrong, and
// how many frames it had sent by then (-1: it failed while starting).
// Result.Err folds workers that failed alike into one, listing the others
// in Others and summing Frames.
type WorkerError struct {
	Worker int
	Others []int // further workers with the same error (Result.Err)
	Err    error
	Frames int64
}

func (e *WorkerError) Error() string {
	var b strings.Builder
	if len(e.Others) == 0 {
		fmt.Fprintf(&b, "worker %d: ", e.Worker)
	} else {
		b.WriteString("workers ")
		writeRuns(&b, append([]int{e.Worker}, e.Others...))
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	switch {
	case e.Frames >= 0 && len(e.Others) > 0:
		fmt.Fprintf(&b, " (after %d frames in all)", e.Frames)
	case e.Frames >= 0:
		fmt.Fprintf(&b, " (after %d frames)", e.Frames)
	}
	return b.String()
}

// Unwrap returns the worker's error.
func (e *WorkerError) Unwrap() error { return e.Err }

// writeRuns writes ascending worker numbers with each run of three or
// more consecutive ones as a range: 0-15 for sixteen workers, "0, 1" for
// two, "0-2, 5" for 0, 1, 2 and 5.
func writeRuns(b *strings.Builder, ws []int) {
	for i := 0; i < len(ws); {
		j := i
		for j+1 < len(ws) && ws[j+1] == ws[j]+1 {
			j++
		}
		if i > 0 {
			b.WriteString(", ")
		}
		switch {
		case j-i >= 2:
			fmt.Fprintf(b, "%d-%d", ws[i], ws[j])
		case j > i:
			fmt.Fprintf(b, "%d, %d", ws[i], ws[j])
		default:
			fmt.Fprintf(b, "%d", ws[i])
		}
		i = j + 1
	}
}
