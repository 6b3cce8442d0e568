package report

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestIntervalsSumToTotals: whatever the sampling (irregular, repeated,
// ending between samples or exactly at one), the intervals add up to the
// run's totals and follow each other without gaps.
func TestIntervalsSumToTotals(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		var iv Intervals
		var at time.Duration
		var frames, bytes uint64
		var lost int64
		n := rng.IntN(8)
		for range n {
			at += time.Duration(rng.IntN(3)) * 100 * time.Millisecond // 0: a sample that does not advance
			frames += uint64(rng.IntN(1000))
			bytes = frames * 64
			lost += int64(rng.IntN(5)) - 1
			l := lost
			iv.Add(Sample{Elapsed: at, Frames: frames, Bytes: bytes, Lost: &l})
		}
		end := at + time.Duration(rng.IntN(2))*50*time.Millisecond
		frames += uint64(rng.IntN(1000))
		lost += 2
		l := lost
		list := iv.Finish(Sample{Elapsed: end, Frames: frames, Bytes: frames * 64, Lost: &l})
		var sf, sb uint64
		var sl int64
		prev := 0.0
		for i, in := range list {
			sf += in.Frames
			sb += in.Bytes
			if in.Lost != nil {
				sl += *in.Lost
			}
			if in.Start != prev || in.End < in.Start {
				t.Fatalf("trial %d: interval %d spans %v–%v after %v", trial, i, in.Start, in.End, prev)
			}
			prev = in.End
		}
		if sf != frames || sb != frames*64 || (len(list) > 0 && sl != lost) {
			t.Fatalf("trial %d: intervals sum to %d frames, %d bytes, %d lost; totals %d, %d, %d (%+v)", trial, sf, sb, sl, frames, frames*64, lost, list)
		}
	}
}

func TestRepeatsOf(t *testing.T) {
	r := RepeatsOf([]float64{10, 30, 20})
	if r.Runs != 3 || r.MedianPPS != 20 || r.MinPPS != 10 || r.MaxPPS != 30 || r.Spread != 1 {
		t.Fatalf("%+v", r)
	}
	if r := RepeatsOf([]float64{10, 20}); r.MedianPPS != 15 {
		t.Fatalf("even count: %+v", r)
	}
	if RepeatsOf(nil) != nil {
		t.Fatal("no runs gave a summary")
	}
}
