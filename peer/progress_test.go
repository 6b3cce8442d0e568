//go:build linux

package peer

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/hist"
	"github.com/wpg-dev/wpg/recv"
)

// receiverSide runs the receiving side of one control connection on sock:
// AcceptRequest, Accept, then body; it returns the request it got.
func receiverSide(t *testing.T, sock string, body func(c *Control)) <-chan RecvRequest {
	t.Helper()
	got := make(chan RecvRequest, 1)
	go func() {
		c, err := AcceptRequest(context.Background(), sock)
		if err != nil {
			t.Error(err)
			close(got)
			return
		}
		got <- c.Request
		if err := c.Accept(); err != nil {
			t.Error(err)
			return
		}
		body(c)
		c.Close()
	}()
	return got
}

// waitLive waits (at most 10 s) until l has seen frames from a receiver.
func waitLive(t *testing.T, l *Live, frames uint64) LiveCounts {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if c, _ := l.Snapshot(); c.Frames == frames {
			return c
		}
	}
	c, _ := l.Snapshot()
	t.Fatalf("the sender's Live shows %+v; want %d frames", c, frames)
	return c
}

// A sender with a Live asks for progress; the receiver's progress messages
// reach the Live in order, and the answer after them still reaches the
// sender.
func TestProgressRoundTrip(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "rx.sock")
	next := make(chan struct{})
	got := receiverSide(t, sock, func(c *Control) {
		c.Progress(recv.Progress{Frames: 5, Bytes: 50, Lost: 1, Corrupted: 2, Duplicated: 3, Elapsed: 100 * time.Millisecond})
		<-next
		c.Progress(recv.Progress{Frames: 9, Bytes: 90, Elapsed: 200 * time.Millisecond})
		c.Answer(recv.Result{Schema: recv.Schema, Frames: 9}, nil)
	})
	live := NewLive(100 * time.Millisecond)
	s := &Session{Name: "shm", Where: sock}
	if err := s.control(WithLive(context.Background(), live), sock, 5*time.Second, nil, RecvRequest{Backend: "shm"}); err != nil {
		t.Fatal(err)
	}
	defer s.Ctrl.Close()
	if q := <-got; q.ProgressMs != 100 {
		t.Fatalf("request asked progress_ms %d; want 100", q.ProgressMs)
	}
	c := waitLive(t, live, 5)
	if c.Receivers != 1 || c.Bytes != 50 || c.Lost != 1 || c.Corrupted != 2 || c.Duplicated != 3 || c.Elapsed != 100*time.Millisecond {
		t.Fatalf("first progress: %+v", c)
	}
	close(next)
	a, err := s.readAnswer()
	if err != nil {
		t.Fatal(err)
	}
	if r, err := recv.UnmarshalPeer(a.Result); err != nil || r.Frames != 9 {
		t.Fatalf("answer %+v, %v", r, err)
	}
	if c, _ := live.Snapshot(); c.Frames != 9 || c.Messages != 2 {
		t.Fatalf("after the answer the Live shows %+v; want the second message (9 frames)", c)
	}
}

// A receiver that sends no progress (a wpg of before progress messages)
// still answers a sender that asked for it: the Live stays empty.
func TestProgressOldReceiver(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "rx.sock")
	receiverSide(t, sock, func(c *Control) {
		b, _ := recv.Result{Schema: recv.Schema, Frames: 4}.MarshalPeer()
		if err := WriteAnswer(c.Conn, RecvAnswer{Result: b}); err != nil {
			t.Error(err)
		}
	})
	live := NewLive(0)
	s := &Session{Name: "shm", Where: sock}
	if err := s.control(WithLive(context.Background(), live), sock, 5*time.Second, nil, RecvRequest{Backend: "shm"}); err != nil {
		t.Fatal(err)
	}
	defer s.Ctrl.Close()
	a, err := s.readAnswer()
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := recv.UnmarshalPeer(a.Result); r.Frames != 4 {
		t.Fatalf("answer %s", a.Result)
	}
	if c, h := live.Snapshot(); c.Receivers != 0 || h != nil {
		t.Fatalf("no progress was sent, the Live shows %+v", c)
	}
}

// A sender that does not ask for progress (an older wpg, or no Live) gets
// none: the receiver's Progress sends nothing and the answer comes first.
func TestProgressNotAsked(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "rx.sock")
	got := receiverSide(t, sock, func(c *Control) {
		if c.ProgressEvery() != 0 {
			t.Errorf("ProgressEvery %v for a request without progress_ms", c.ProgressEvery())
		}
		c.Progress(recv.Progress{Frames: 1})
		c.Answer(recv.Result{Schema: recv.Schema, Frames: 2}, nil)
	})
	s := &Session{Name: "shm", Where: sock}
	if err := s.control(context.Background(), sock, 5*time.Second, nil, RecvRequest{Backend: "shm"}); err != nil {
		t.Fatal(err)
	}
	defer s.Ctrl.Close()
	if q := <-got; q.ProgressMs != 0 {
		t.Fatalf("progress_ms %d without a Live", q.ProgressMs)
	}
	s.Ctrl.SetReadDeadline(time.Now().Add(10 * time.Second))
	a, err := ReadAnswer(s.Ctrl) // what a sender of before progress messages reads
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := recv.UnmarshalPeer(a.Result); r.Frames != 2 {
		t.Fatalf("answer %s", a.Result)
	}
}

// The request's progress period is bounded below.
func TestProgressEveryFloor(t *testing.T) {
	c := &Control{Request: RecvRequest{ProgressMs: 1}}
	if got := c.ProgressEvery(); got != MinProgressMs*time.Millisecond {
		t.Fatalf("ProgressEvery for progress_ms 1 = %v; want %v", got, MinProgressMs*time.Millisecond)
	}
	if l := NewLive(time.Millisecond); l.every != MinProgressMs*time.Millisecond {
		t.Fatalf("NewLive(1ms) asks every %v", l.every)
	}
}

// A progress message stays within MaxProgress: a latency window too large
// for it is left out, the counts go through.
func TestProgressBounded(t *testing.T) {
	var b bytes.Buffer
	big := json.RawMessage(`"` + strings.Repeat("x", MaxProgress) + `"`)
	if err := WriteProgress(&b, RecvProgress{Frames: 7, Latency: big}); err != nil {
		t.Fatal(err)
	}
	if b.Len() > MaxProgress {
		t.Fatalf("progress message of %d bytes, over MaxProgress %d", b.Len(), MaxProgress)
	}
	p, err := ReadProgress(&b)
	if err != nil || p.Frames != 7 || p.Latency != nil {
		t.Fatalf("read back %+v, %v", p, err)
	}
}

// The Live merges the receivers' latency windows and sums their latest
// totals; a window that does not decode is left out.
func TestLiveMerges(t *testing.T) {
	win := func(vs ...int64) json.RawMessage {
		h := hist.New(1, 100_000_000_000)
		for _, v := range vs {
			h.Record(v)
		}
		b, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	l := NewLive(0)
	a, b := l.join(), l.join()
	l.update(a, RecvProgress{Frames: 10, Lost: 1, Latency: win(1000, 1000, 1000)})
	l.update(a, RecvProgress{Frames: 20, Lost: 0, Latency: win(2000)})
	l.update(b, RecvProgress{Frames: 5, Lost: 2, Latency: json.RawMessage(`{"lo":0}`)})
	c, h := l.Snapshot()
	if c.Receivers != 2 || c.Frames != 25 || c.Lost != 2 || c.Messages != 3 {
		t.Fatalf("counts %+v; want the latest of each receiver summed", c)
	}
	if h.Count() != 4 || h.Max() < 2000 || h.Quantile(50) > 1001 {
		t.Fatalf("latency %d values, max %d, p50 %d; want the 4 of both windows", h.Count(), h.Max(), h.Quantile(50))
	}
}

// The receiver's RFC 3550 jitter J goes with its progress (jitter_ns) and
// the Live shows it, the receivers' mean weighted by their frames; a
// progress message of a receiver of before the field gives none.
func TestProgressCarriesJitter(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "rx.sock")
	receiverSide(t, sock, func(c *Control) {
		c.Progress(recv.Progress{Frames: 5, Elapsed: 100 * time.Millisecond, JitterNs: 1234})
		c.Answer(recv.Result{Schema: recv.Schema, Frames: 5}, nil)
	})
	live := NewLive(100 * time.Millisecond)
	s := &Session{Name: "shm", Where: sock}
	if err := s.control(WithLive(context.Background(), live), sock, 5*time.Second, nil, RecvRequest{Backend: "shm"}); err != nil {
		t.Fatal(err)
	}
	defer s.Ctrl.Close()
	if _, err := s.readAnswer(); err != nil {
		t.Fatal(err)
	}
	if c := waitLive(t, live, 5); c.JitterNs != 1234 {
		t.Fatalf("the Live shows jitter %d ns; want the receiver's 1234", c.JitterNs)
	}

	var b bytes.Buffer
	if err := WriteProgress(&b, RecvProgress{Frames: 3, JitterNs: 77}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"jitter_ns":77`) {
		t.Fatalf("progress message %q has no jitter_ns", b.String())
	}

	l := NewLive(0)
	x, y, old := l.join(), l.join(), l.join()
	l.update(x, RecvProgress{Frames: 30, JitterNs: 1000})
	l.update(y, RecvProgress{Frames: 10, JitterNs: 5000})
	var p RecvProgress // a receiver of before jitter_ns
	if err := json.Unmarshal([]byte(`{"elapsed_ns":1,"frames":60,"bytes":0,"lost":0,"duplicated":0,"corrupted":0,"unsigned":0}`), &p); err != nil {
		t.Fatal(err)
	}
	l.update(old, p)
	if c, _ := l.Snapshot(); c.Frames != 100 || c.JitterNs != 2000 {
		t.Fatalf("Snapshot %+v; want jitter 2000 ns (30 frames at 1 µs, 10 at 5 µs, the old receiver's 60 left out)", c)
	}
}
