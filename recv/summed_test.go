package recv

import (
	"context"
	"hash/crc32"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/frame"
)

// summingReceiver replays payload frames with the sums a receiver that
// computes them while copying would return (recv.PayloadSummer).
type summingReceiver struct {
	sliceReceiver
	agree  bool
	asked  bool
	all    []frame.PayloadCRC
	served int
	last   []frame.PayloadCRC
}

func (s *summingReceiver) SumPayloads() bool { s.asked = true; return s.agree }

func (s *summingReceiver) PayloadSums() []frame.PayloadCRC { return s.last }

func (s *summingReceiver) Next(views [][]byte, timeout time.Duration) (int, error) {
	n, err := s.sliceReceiver.Next(views, timeout)
	s.last = s.all[s.served : s.served+n]
	s.served += n
	return n, err
}

// TestRunSummed: Run decodes a PayloadSummer's frames with Options.Summed
// and their sums, so a receiver's CRC of a damaged frame makes it corrupt
// (and the sender's checksum is what it is compared with); a receiver that
// declines, or no Summed, leaves the frames to decode.
func TestRunSummed(t *testing.T) {
	src, err := frame.NewPayloadSource(frame.PayloadConfig{Size: 8192, Verify: frame.VerifyOn}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	tab := crc32.MakeTable(crc32.Castagnoli)
	build := func() ([][]byte, []frame.PayloadCRC) {
		var frames [][]byte
		var sums []frame.PayloadCRC
		for i := 0; i < 10; i++ {
			b := [][]byte{make([]byte, src.MaxFrame())}
			lens := []int{0}
			src.Render(b, lens, time.Now().UnixNano())
			f := b[0][:lens[0]]
			if i == 4 {
				f[frame.PayloadHeaderLen+5000] ^= 1 // damaged in transit
			}
			frames = append(frames, f)
			sums = append(sums, frame.PayloadCRC{Sum: crc32.Update(0, tab, f[frame.PayloadHeaderLen:]), Valid: i%3 != 0})
		}
		return frames, sums
	}
	for _, c := range []struct {
		agree, summed bool
	}{{true, true}, {false, true}, {true, false}} {
		frames, sums := build()
		rx := &summingReceiver{sliceReceiver: sliceReceiver{frames: frames, eof: true}, agree: c.agree, all: sums}
		opts := Options{Batch: 3}
		if c.summed {
			opts.Summed = frame.DecodePayloadSummed
		}
		decode := Decoder(frame.DecodePayload)
		r, err := Run(context.Background(), rx, decode, opts)
		if err != nil || r.Frames != 9 || r.Corrupted != 1 {
			t.Fatalf("agree=%v summed=%v: err=%v frames=%d corrupted=%d; want 9 and 1", c.agree, c.summed, err, r.Frames, r.Corrupted)
		}
		if rx.asked != c.summed {
			t.Fatalf("agree=%v summed=%v: SumPayloads asked=%v", c.agree, c.summed, rx.asked)
		}
	}
	// The receiver's sum is what is compared: a wrong one is corruption.
	frames, sums := build()
	for i := range sums {
		sums[i] = frame.PayloadCRC{Sum: sums[i].Sum ^ 1, Valid: true}
	}
	rx := &summingReceiver{sliceReceiver: sliceReceiver{frames: frames, eof: true}, agree: true, all: sums}
	r, _ := Run(context.Background(), rx, frame.DecodePayload, Options{Summed: frame.DecodePayloadSummed})
	if r.Corrupted != 10 {
		t.Fatalf("wrong sums: corrupted=%d, want 10", r.Corrupted)
	}
}
