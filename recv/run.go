package recv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/sys"
)

// Options control Run.
type Options struct {
	// Expect stops the loop once that many distinct intact signed frames
	// have arrived (duplicates, corrupted frames and frames without a
	// signature do not count toward it); 0 means no count.
	Expect uint64
	// Duration stops the loop that long after it started; 0 means none.
	Duration time.Duration
	// IdleTimeout stops the loop when nothing arrived for that long after
	// the first frame; 0 means never.
	IdleTimeout time.Duration
	// Batch is the number of frames asked from the receiver per call
	// (default 64).
	Batch int
	// Progress, when set, is called about every ProgressInterval (default
	// 1 s) from the receive loop.
	Progress         func(Progress)
	ProgressInterval time.Duration
}

// Progress is a snapshot passed to Options.Progress.
type Progress struct {
	Frames    uint64
	Corrupted uint64
	Unsigned  uint64
	Elapsed   time.Duration
}

// RxTimestamper is implemented by receivers that know when the kernel
// received each frame of the last Next (CLOCK_MONOTONIC ns, one per
// frame); Run then measures latency from those times rather than from
// when the loop saw the batch.
type RxTimestamper interface {
	RxTimestamps() []int64
}

// pollSlice bounds one wait in the receiver so that ctx, Duration and
// progress are honoured while nothing arrives.
const pollSlice = 100 * time.Millisecond

// Run receives frames from rx, decodes each with decode and counts them
// until opts says stop, ctx is cancelled (Result.Stop "interrupted", no
// error) or the sender goes away (io.EOF from the receiver: Stop "eof"). It
// returns the Result so far together with any receive error.
func Run(ctx context.Context, rx backend.Receiver, decode Decoder, opts Options) (Result, error) {
	if decode == nil {
		return Result{}, errors.New("recv.Run: no decoder")
	}
	batch := opts.Batch
	if batch <= 0 {
		batch = 64
	}
	interval := opts.ProgressInterval
	if interval <= 0 {
		interval = time.Second
	}
	// One OS thread for the whole loop, as the engine does for senders: a
	// loop that the Go scheduler moves between threads after a blocking
	// system call (poll, futex) loses its warm cache and thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t := NewTracker()
	views := make([][]byte, batch)
	stamper, _ := rx.(RxTimestamper)
	start := time.Now()
	var deadline time.Time
	if opts.Duration > 0 {
		deadline = start.Add(opts.Duration)
	}
	var lastFrame time.Time // zero until the first frame
	nextProgress := start.Add(interval)
	stop := ""
	var rerr error
	for stop == "" {
		if ctx.Err() != nil {
			stop = "interrupted"
			break
		}
		now := time.Now()
		wait := pollSlice
		if !deadline.IsZero() {
			if left := deadline.Sub(now); left <= 0 {
				stop = "duration"
				break
			} else if left < wait {
				wait = left
			}
		}
		if opts.IdleTimeout > 0 && !lastFrame.IsZero() {
			if left := lastFrame.Add(opts.IdleTimeout).Sub(now); left <= 0 {
				stop = "idle"
				break
			} else if left < wait {
				wait = left
			}
		}
		n, err := rx.Next(views, wait)
		if n > 0 {
			rxNs := sys.MonotonicNs()
			var stamps []int64
			if stamper != nil {
				if st := stamper.RxTimestamps(); len(st) >= n {
					stamps = st
				}
			}
			for i, v := range views[:n] {
				if stamps != nil {
					rxNs = stamps[i]
				}
				sig, ok, corrupt := decode(v)
				switch {
				case corrupt:
					t.Corrupt(len(v))
				case ok:
					t.ObserveSignature(sig, rxNs, len(v))
				default:
					t.Unsigned(len(v))
				}
			}
			lastFrame = time.Now()
			if opts.Expect > 0 && t.received >= opts.Expect {
				stop = "expect"
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				stop = "eof"
			} else {
				stop = "error"
				rerr = fmt.Errorf("receive: %w", err)
			}
		}
		if opts.Progress != nil {
			if now := time.Now(); !now.Before(nextProgress) {
				nextProgress = now.Add(interval)
				opts.Progress(Progress{Frames: t.received, Corrupted: t.corrupted, Unsigned: t.unsigned, Elapsed: now.Sub(start)})
			}
		}
	}
	r := t.Result()
	r.Stop = stop
	info := rx.Info()
	r.Backend = &info
	if opts.Expect > 0 {
		r.Expected = opts.Expect
		if r.Frames < opts.Expect {
			r.Missing = opts.Expect - r.Frames
		}
	}
	return r, rerr
}
