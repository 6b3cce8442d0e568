//go:build linux

package shmring

import (
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/sys"
)

func pair(t testing.TB, cfg Config) (*Ring, *Ring) {
	t.Helper()
	a, err := Create(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := sys.DupFd(a.Fd())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(fd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

func TestLayout(t *testing.T) {
	for _, c := range []struct {
		cfg           Config
		slots, stride int
	}{
		{Config{Slots: 3, SlotSize: 96}, 4, 128},
		{Config{Slots: 1, SlotSize: 64}, 2, 64},
		{Config{Slots: 8, SlotSize: 460832}, 8, 462848},
	} {
		s, st, _, err := Layout(c.cfg)
		if err != nil || s != c.slots || st != c.stride {
			t.Errorf("Layout(%+v) = %d, %d, %v; want %d, %d", c.cfg, s, st, err, c.slots, c.stride)
		}
	}
	for _, bad := range []Config{{Slots: 0, SlotSize: 64}, {Slots: 4, SlotSize: 0}, {Slots: 1 << 21, SlotSize: 64}} {
		if _, _, _, err := Layout(bad); err == nil {
			t.Errorf("Layout(%+v): no error", bad)
		}
	}
}

func TestOpenRejectsForeignMemory(t *testing.T) {
	fd, err := sys.MemfdCreate("not-a-ring", 8192)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(fd); err == nil {
		t.Fatal("Open accepted a zeroed memfd")
	}
	sys.CloseFd(fd)
}

func TestStreamInOrderAndEOF(t *testing.T) {
	a, b := pair(t, Config{Slots: 8, SlotSize: 256})
	const total = 100000
	go func() {
		p := a.Producer()
		bufs := make([][]byte, 5)
		lens := make([]int, 5)
		for seq := uint64(0); seq < total; {
			n, err := p.Reserve(bufs[:min(5, int(total-seq))])
			if err != nil {
				panic(err)
			}
			if n == 0 {
				p.WaitSpace(time.Second)
				continue
			}
			for i := 0; i < n; i++ {
				l := 8 + int(seq%200)
				binary.LittleEndian.PutUint64(bufs[i], seq)
				lens[i] = l
				seq++
			}
			p.Commit(lens[:n])
		}
		p.Close()
	}()
	c := b.Consumer()
	views := make([][]byte, 16)
	var want uint64
	for {
		n, err := c.Next(views, time.Second)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range views[:n] {
			if got := binary.LittleEndian.Uint64(v); got != want || len(v) != 8+int(want%200) {
				t.Fatalf("frame %d: seq %d len %d", want, got, len(v))
			}
			want++
		}
	}
	if want != total {
		t.Fatalf("received %d frames, want %d", want, total)
	}
}

func TestConsumerCloseStopsProducer(t *testing.T) {
	a, b := pair(t, Config{Slots: 2, SlotSize: 64})
	p := a.Producer()
	bufs := make([][]byte, 4)
	n, _ := p.Reserve(bufs)
	p.Commit([]int{64, 64}[:n])
	b.Consumer().Close()
	if err := p.WaitSpace(time.Second); !errors.Is(err, ErrClosed) {
		t.Fatalf("WaitSpace after consumer close = %v, want ErrClosed", err)
	}
	if _, err := p.Reserve(bufs); !errors.Is(err, ErrClosed) {
		t.Fatalf("Reserve after consumer close = %v, want ErrClosed", err)
	}
}

func TestConsumerTimeout(t *testing.T) {
	_, b := pair(t, Config{Slots: 4, SlotSize: 64})
	n, err := b.Consumer().Next(make([][]byte, 1), 20*time.Millisecond)
	if n != 0 || err != nil {
		t.Fatalf("Next on an empty ring = %d, %v; want 0, nil", n, err)
	}
}

func BenchmarkRing64B(b *testing.B) {
	a, r := pair(b, Config{Slots: 4096, SlotSize: 96})
	done := make(chan uint64)
	go func() {
		c := r.Consumer()
		views := make([][]byte, 256)
		var got uint64
		for {
			n, err := c.Next(views, time.Second)
			if err != nil {
				break
			}
			got += uint64(n)
		}
		done <- got
	}()
	p := a.Producer()
	bufs := make([][]byte, 256)
	lens := make([]int, 256)
	for i := range lens {
		lens[i] = 96
	}
	b.ReportAllocs()
	b.SetBytes(96)
	sent := 0
	for sent < b.N {
		n, _ := p.Reserve(bufs[:min(256, b.N-sent)])
		if n == 0 {
			p.WaitSpace(time.Second)
			continue
		}
		for i := 0; i < n; i++ {
			bufs[i][0] = byte(i)
		}
		sent += p.Commit(lens[:n])
	}
	p.Close()
	if got := <-done; got != uint64(b.N) {
		b.Fatalf("received %d of %d", got, b.N)
	}
}
