package recv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/hist"
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
	// Progress, when set, is called from the receive loop every
	// ProgressEvery (default 1 s, at least MinProgressEvery), on the
	// loop's schedule: a call that comes late does not move the later
	// ones. It must return quickly (the loop waits for it).
	Progress      func(Progress)
	ProgressEvery time.Duration
	// Summed, when set, decodes the frames of a receiver that computes
	// each payload's CRC-32C itself while it copies it (a PayloadSummer
	// that agrees to): Run hands such frames with their CRC to Summed
	// instead of decode (frame.DecodePayloadSummed for --verify on).
	Summed func(b []byte, c frame.PayloadCRC) (sig frame.Signature, ok, corrupt bool)
	// Streams, when set, are the streams this receiver expects (Tracker.Expect):
	// a signed frame of another is counted as WrongStream only.
	Streams *StreamSet
	// IPFragments says that the frames are Ethernet frames (a network
	// receiver, DecodePacket): Run counts the IP fragments among them, so
	// that a fragmented stream's report counts datagrams, as its sender's
	// does (Result.Datagrams, Result.UnsignedFragments).
	IPFragments bool
}

// MinProgressEvery is the shortest Options.ProgressEvery; a shorter one
// is taken as this.
const MinProgressEvery = 50 * time.Millisecond

// Progress is a snapshot passed to Options.Progress.
type Progress struct {
	// Frames, Corrupted and Unsigned are the totals so far (as in Result).
	Frames    uint64
	Corrupted uint64
	Unsigned  uint64
	// Elapsed is the time since the loop started.
	Elapsed time.Duration
	// Bytes and Lost are the totals so far of the signed frames and of
	// the sequence gaps (Lost can go down: a late frame fills a gap);
	// Duplicated that of the frames seen twice.
	Bytes      uint64
	Lost       uint64
	Duplicated uint64
	// Latency is the one-way latency of the frames since the previous
	// call (the window; Samples 0 when no frame carried a usable
	// transmit timestamp), its percentiles exact to 3 significant digits.
	Latency WindowLatency
	// JitterNs is the interarrival jitter J so far (Result.JitterNs): a
	// smoothed value, so the current one stands for the recent frames.
	JitterNs int64

	win *hist.Hist // the window behind Latency (nil: none)
}

// WindowLatency summarises the one-way latency (ns) of a progress window.
type WindowLatency struct {
	Samples             int64
	P50Ns, P99Ns, MaxNs int64
}

// MarshalLatency returns the window's latency histogram in the JSON form
// of wpg's histograms (bounds and non-zero buckets, as latency_histogram
// of MarshalPeer), nil when the window has no sample, for a receiver that
// hands its windows on (the peer protocol's progress message); the
// sender decodes and merges them.
func (p Progress) MarshalLatency() ([]byte, error) {
	if p.win.Count() == 0 {
		return nil, nil
	}
	return json.Marshal(p.win)
}

// progressOf is t's counts so far, for Options.Progress, and the latency
// since the previous call: the tracker's histogram less prev, the sum of
// the earlier windows, which then takes this one too. It walks the
// streams and copies the histogram (when new latencies came): a few
// times a second at most, never per frame, and the frame path records
// into one histogram only.
func progressOf(t *Tracker, elapsed time.Duration, prev *hist.Hist) Progress {
	p := Progress{Frames: t.received, Corrupted: t.corrupted, Unsigned: t.unsigned, Elapsed: elapsed, JitterNs: t.jitter.ns()}
	for _, s := range t.order {
		p.Bytes += s.bytes
		p.Lost += s.lost
		p.Duplicated += s.duplicated
	}
	if prev != nil && t.latency.Count() > prev.Count() {
		p.win = t.latency.Sub(prev)
		prev.Merge(p.win)
		p.Latency = WindowLatency{Samples: p.win.Count(), P50Ns: p.win.Quantile(50), P99Ns: p.win.Quantile(99), MaxNs: p.win.Max()}
	}
	return p
}

// RxTimestamper is implemented by receivers that know when the kernel
// received each frame of the last Next (CLOCK_MONOTONIC ns, one per
// frame); Run then measures latency from those times rather than from
// when the loop saw the batch.
type RxTimestamper interface {
	RxTimestamps() []int64
}

// PayloadSummer is implemented by receivers that can compute the CRC-32C
// of each payload frame's payload while they copy the frame into their own
// memory, piece by piece while the bytes are still in cache, instead of
// leaving the decoder a second pass over every byte. Run asks once, before
// the first Next, when Options.Summed is set.
type PayloadSummer interface {
	// SumPayloads turns the summing on; false when this receiver cannot
	// (it then returns no sums).
	SumPayloads() bool
	// PayloadSums returns one entry per frame of the last Next: the CRC
	// of frame i's payload, or an invalid entry for a frame it did not
	// sum (the decoder then computes it).
	PayloadSums() []frame.PayloadCRC
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
	interval := opts.ProgressEvery
	if interval <= 0 {
		interval = time.Second
	}
	interval = max(interval, MinProgressEvery)
	// One OS thread for the whole loop, as the engine does for senders: a
	// loop that the Go scheduler moves between threads after a blocking
	// system call (poll, futex) loses its warm cache and thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t := NewTracker()
	t.Expect(opts.Streams)
	var prevLat *hist.Hist // the latency reported in earlier progress windows
	if opts.Progress != nil {
		prevLat = hist.New(latencyMinNs, latencyMaxNs)
	}
	views := make([][]byte, batch)
	stamper, _ := rx.(RxTimestamper)
	summer, _ := rx.(PayloadSummer)
	if opts.Summed == nil || summer == nil || !summer.SumPayloads() {
		summer = nil
	}
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
		if opts.Progress != nil {
			wait = max(min(wait, nextProgress.Sub(now)), time.Millisecond)
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
			var sums []frame.PayloadCRC
			if summer != nil {
				if s := summer.PayloadSums(); len(s) >= n {
					sums = s
				}
			}
			for i, v := range views[:n] {
				if stamps != nil {
					rxNs = stamps[i]
				}
				var sig frame.Signature
				var ok, corrupt bool
				if sums != nil {
					sig, ok, corrupt = opts.Summed(v, sums[i])
				} else {
					sig, ok, corrupt = decode(v)
				}
				switch {
				case corrupt:
					t.CorruptStream(sig.Stream, len(v)) // the stream it claims to be of
				case ok:
					before := t.received
					t.ObserveSignature(sig, rxNs, len(v))
					if opts.IPFragments && t.received > before {
						if frag, _ := ipFragment(v); frag {
							t.datagrams++ // a fragmented datagram, by its signed fragment
						}
					}
				default:
					t.Unsigned(len(v))
					if opts.IPFragments {
						if frag, _ := ipFragment(v); frag {
							t.unsignedFragments++
						}
					}
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
				// On the schedule; after a stall, a period from now.
				if nextProgress = nextProgress.Add(interval); !now.Before(nextProgress) {
					nextProgress = now.Add(interval)
				}
				opts.Progress(progressOf(t, now.Sub(start), prevLat))
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
