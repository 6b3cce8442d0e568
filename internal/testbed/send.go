package testbed

import (
	"testing"
	"time"
)

// Sender is the part of a backend's sender that SendRendered drives
// (backend.Sender has it).
type Sender interface {
	Reserve(bufs [][]byte) (int, error)
	Commit(lens []int) (int, error)
	Flush() error
}

// Renderer fills buffers with frames (template.Source has it).
type Renderer interface {
	Render(bufs [][]byte, lens []int, now int64) int
}

// SendRendered sends count frames from src through snd, batch at a time,
// pausing between batches so that a receiver on the same host keeps up,
// and flushes; a failure ends the test.
func SendRendered(t testing.TB, snd Sender, src Renderer, count, batch int, pause time.Duration) {
	t.Helper()
	bufs, lens := make([][]byte, batch), make([]int, batch)
	for sent := 0; sent < count; {
		n, err := snd.Reserve(bufs[:min(batch, count-sent)])
		if err != nil {
			t.Fatal(err)
		}
		m := src.Render(bufs[:n], lens[:n], time.Now().UnixNano())
		if _, err := snd.Commit(lens[:m]); err != nil {
			t.Fatal(err)
		}
		sent += m
		time.Sleep(pause)
	}
	if err := snd.Flush(); err != nil {
		t.Fatal(err)
	}
}
