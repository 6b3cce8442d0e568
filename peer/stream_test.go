package peer

import (
	"errors"
	"io"
	"testing"

	"github.com/wpg-dev/wpg/frame"
)

// chunked returns a ReadFunc serving data in pieces of at most step bytes.
func chunked(data []byte, step int) ReadFunc {
	return func(b []byte) (int, error) {
		if len(data) == 0 {
			return 0, io.EOF
		}
		n := copy(b, data[:min(step, len(data))])
		data = data[n:]
		return n, nil
	}
}

func frames(t *testing.T, size, n int) []byte {
	t.Helper()
	src, err := frame.NewPayloadSource(frame.PayloadConfig{Size: size}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	buf := [][]byte{make([]byte, src.MaxFrame())}
	lens := []int{0}
	for i := 0; i < n; i++ {
		src.Render(buf, lens, 1)
		out = append(out, buf[0][:lens[0]]...)
	}
	return out
}

func TestStreamReaderCutsFrames(t *testing.T) {
	for _, c := range []struct{ size, n, step int }{{64, 500, 7}, {64, 500, 1 << 20}, {4096, 50, 1000}, {460800, 5, 65536}, {460800, 5, 1 << 30}} {
		sr := NewStreamReader(chunked(frames(t, c.size, c.n), c.step))
		views := make([][]byte, 16)
		var got uint64
		for {
			n, err := sr.Next(views)
			for _, v := range views[:n] {
				sig, ok, corrupt := frame.DecodePayload(v)
				if !ok || corrupt || sig.Seq != got {
					t.Fatalf("size %d step %d: frame %d: seq %d ok=%v corrupt=%v", c.size, c.step, got, sig.Seq, ok, corrupt)
				}
				got++
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if got != uint64(c.n) || sr.Frames != got {
			t.Fatalf("size %d step %d: %d frames, want %d", c.size, c.step, got, c.n)
		}
	}
}

// With the whole stream available, a large frame takes one read once its
// length is known.
func TestStreamReaderOneReadPerLargeFrame(t *testing.T) {
	sr := NewStreamReader(chunked(frames(t, 460800, 10), 1<<30))
	views := make([][]byte, 1)
	for {
		_, err := sr.Next(views)
		if err != nil {
			break
		}
	}
	if sr.Frames != 10 || sr.Reads > 11 {
		t.Fatalf("%d frames in %d reads, want 10 in at most 11", sr.Frames, sr.Reads)
	}
}

func TestStreamReaderTruncatedAndForeign(t *testing.T) {
	data := frames(t, 4096, 2)
	sr := NewStreamReader(chunked(data[:len(data)-10], 1<<20))
	views := make([][]byte, 4)
	var err error
	for err == nil {
		_, err = sr.Next(views)
	}
	if errors.Is(err, io.EOF) {
		t.Fatal("a stream cut inside a frame ended with a plain EOF")
	}
	sr = NewStreamReader(chunked(make([]byte, 1000), 1<<20))
	n, err := sr.Next(views)
	if n != 1 || err != nil {
		t.Fatalf("foreign bytes: Next = %d, %v; want them handed over once", n, err)
	}
	if _, err := sr.Next(views); !errors.Is(err, ErrNotPayload) {
		t.Fatalf("after foreign bytes: %v, want ErrNotPayload", err)
	}
}
