package recv

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/hist"
	"github.com/wpg-dev/wpg/internal/sys"
)

// tickReceiver hands out a few frames per call, each stamped as sent a
// microsecond ago, and waits a little between calls: a steady sender.
type tickReceiver struct{ seq uint64 }

func (r *tickReceiver) Next(views [][]byte, timeout time.Duration) (int, error) {
	time.Sleep(min(timeout, 2*time.Millisecond))
	n := min(len(views), 3)
	for i := range n {
		b := make([]byte, 16)
		binary.LittleEndian.PutUint64(b, r.seq)
		binary.LittleEndian.PutUint64(b[8:], uint64(sys.MonotonicNs()-1000))
		r.seq++
		views[i] = b
	}
	return n, nil
}
func (r *tickReceiver) Info() backend.Info { return backend.Info{Backend: "test"} }
func (r *tickReceiver) Close() error       { return nil }

// decodeTick reads what tickReceiver wrote.
func decodeTick(b []byte) (frame.Signature, bool, bool) {
	return frame.Signature{Seq: binary.LittleEndian.Uint64(b), TxNs: int64(binary.LittleEndian.Uint64(b[8:])), Workers: 1}, true, false
}

// Progress comes on the ProgressEvery schedule (call k at k periods or
// later, never more calls than periods in the run), each call with the
// latency of exactly the frames since the previous one.
func TestProgressEvery(t *testing.T) {
	var calls []Progress
	var hists []int64
	every := 60 * time.Millisecond
	res, err := Run(context.Background(), &tickReceiver{}, decodeTick, Options{Duration: 300 * time.Millisecond, ProgressEvery: every,
		Progress: func(p Progress) {
			calls = append(calls, p)
			b, err := p.MarshalLatency()
			if err != nil {
				t.Error(err)
			}
			var h hist.Hist
			if b != nil && json.Unmarshal(b, &h) != nil {
				t.Errorf("window histogram does not decode: %s", b)
			}
			hists = append(hists, h.Count())
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) == 0 || len(calls) > 5 {
		t.Fatalf("%d progress calls in a 300 ms run with ProgressEvery 60 ms; want 1 … 5", len(calls))
	}
	var prev uint64
	var samples int64
	for k, p := range calls {
		if p.Elapsed < time.Duration(k+1)*every {
			t.Errorf("call %d at %v, before its period %v", k, p.Elapsed, time.Duration(k+1)*every)
		}
		if got, want := p.Latency.Samples, int64(p.Frames-prev); got != want {
			t.Errorf("call %d: window latency of %d frames, want the %d since the previous call", k, got, want)
		}
		if hists[k] != p.Latency.Samples {
			t.Errorf("call %d: MarshalLatency holds %d values, Latency.Samples %d", k, hists[k], p.Latency.Samples)
		}
		if p.Latency.Samples > 0 && (p.Latency.P50Ns < 1000 || p.Latency.P99Ns < p.Latency.P50Ns || p.Latency.MaxNs < p.Latency.P99Ns) {
			t.Errorf("call %d: latency %+v (frames were stamped 1 µs before they were handed over)", k, p.Latency)
		}
		samples += p.Latency.Samples
		prev = p.Frames
	}
	if res.Latency == nil || int64(res.Latency.Samples) < samples {
		t.Fatalf("the windows hold %d latencies, the result %+v", samples, res.Latency)
	}
}

// A ProgressEvery below MinProgressEvery is raised to it.
func TestProgressEveryFloor(t *testing.T) {
	n := 0
	_, err := Run(context.Background(), &tickReceiver{}, decodeTick, Options{Duration: 200 * time.Millisecond, ProgressEvery: time.Nanosecond,
		Progress: func(Progress) { n++ }})
	if err != nil {
		t.Fatal(err)
	}
	if limit := int(200*time.Millisecond/MinProgressEvery) + 1; n > limit {
		t.Fatalf("%d progress calls in 200 ms with ProgressEvery 1 ns; the floor of %v allows %d", n, MinProgressEvery, limit)
	}
}

// Without Progress no window is kept, and a window without latencies
// marshals to nothing.
func TestProgressNoLatency(t *testing.T) {
	var p Progress
	if b, err := p.MarshalLatency(); b != nil || err != nil {
		t.Fatalf("empty window: %s, %v", b, err)
	}
}
