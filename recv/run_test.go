package recv

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/backend"
)

// sliceReceiver replays prepared frames; it exercises Run's stop logic
// without a kernel object (the AF_PACKET tests cover the real receiver).
type sliceReceiver struct {
	frames [][]byte
	eof    bool
}

func (s *sliceReceiver) Next(views [][]byte, timeout time.Duration) (int, error) {
	if len(s.frames) == 0 {
		if s.eof {
			return 0, io.EOF
		}
		time.Sleep(timeout)
		return 0, nil
	}
	n := copy(views, s.frames)
	s.frames = s.frames[n:]
	return n, nil
}
func (s *sliceReceiver) Info() backend.Info { return backend.Info{Backend: "test"} }
func (s *sliceReceiver) Close() error       { return nil }

func TestRunStops(t *testing.T) {
	p := packets(t)
	var frames [][]byte
	for i := 0; i < 100; i++ {
		frames = append(frames, p["udp4"], p["tcp6"])
	}
	frames = append(frames, []byte("not a wpg frame at all, just bytes"))

	r, err := Run(context.Background(), &sliceReceiver{frames: frames, eof: true}, DecodePacket, Options{Batch: 7})
	if err != nil || r.Stop != "eof" || r.Frames != 2 || r.Duplicated != 198 || r.Unsigned != 1 {
		t.Fatalf("eof: err=%v %+v", err, r)
	}
	var distinct [][]byte
	for _, b := range p {
		distinct = append(distinct, b)
	}
	r, _ = Run(context.Background(), &sliceReceiver{frames: distinct}, DecodePacket, Options{Expect: 5, Batch: 2, IdleTimeout: time.Minute})
	if r.Stop != "expect" || r.Expected != 5 {
		t.Fatalf("expect: %+v", r)
	}
	r, _ = Run(context.Background(), &sliceReceiver{frames: frames[:3]}, DecodePacket, Options{Expect: 10, IdleTimeout: time.Millisecond})
	if r.Stop != "idle" || r.Missing != 8 {
		t.Fatalf("idle: %+v", r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, _ = Run(ctx, &sliceReceiver{}, DecodePacket, Options{})
	if r.Stop != "interrupted" {
		t.Fatalf("cancel: %+v", r)
	}
	r, _ = Run(context.Background(), &sliceReceiver{}, DecodePacket, Options{Duration: time.Millisecond})
	if r.Stop != "duration" || r.Backend == nil || r.Backend.Backend != "test" {
		t.Fatalf("duration: %+v", r)
	}
}
