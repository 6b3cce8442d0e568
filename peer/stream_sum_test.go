package peer

import (
	"errors"
	"hash/crc32"
	"io"
	"testing"

	"github.com/wpg-dev/wpg/frame"
)

// readSummed reads the whole stream with SumPayloads on and returns, per
// frame, what frame.DecodePayloadSummed said and whether the reader had
// summed it; it also checks every valid sum against hash/crc32.
func readSummed(t *testing.T, sr *StreamReader) (corrupt []bool, summed int) {
	t.Helper()
	sr.SumPayloads()
	tab := crc32.MakeTable(crc32.Castagnoli)
	views := make([][]byte, 16)
	for {
		n, err := sr.Next(views)
		sums := sr.Sums()
		if n > 0 && len(sums) < n {
			t.Fatalf("%d frames, %d sums", n, len(sums))
		}
		for i, v := range views[:n] {
			if sums[i].Valid {
				summed++
				if want := crc32.Update(0, tab, v[frame.PayloadHeaderLen:]); sums[i].Sum != want {
					t.Fatalf("frame %d: reader's CRC %#x, the payload's is %#x", len(corrupt), sums[i].Sum, want)
				}
			}
			_, ok, bad := frame.DecodePayloadSummed(v, sums[i])
			if !ok {
				t.Fatalf("frame %d: not a payload frame", len(corrupt))
			}
			corrupt = append(corrupt, bad)
		}
		if errors.Is(err, io.EOF) {
			return corrupt, summed
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestStreamReaderSumsPayloads(t *testing.T) {
	for _, c := range []struct{ size, n, step int }{{64, 300, 7}, {4096, 50, 1000}, {460800, 5, 65536}, {460800, 5, 100000}, {460800, 5, 1 << 30}, {1 << 20, 3, 212992}} {
		data := frames(t, c.size, c.n)
		sr := NewStreamReader(chunked(data, c.step))
		corrupt, summed := readSummed(t, sr)
		if len(corrupt) != c.n {
			t.Fatalf("size %d step %d: %d frames, want %d", c.size, c.step, len(corrupt), c.n)
		}
		for i, bad := range corrupt {
			if bad {
				t.Fatalf("size %d step %d: intact frame %d reported corrupt", c.size, c.step, i)
			}
		}
		// A frame that arrives over several reads is summed by the reader.
		if flen := len(data) / c.n; c.step < flen && summed == 0 {
			t.Errorf("size %d step %d: no frame summed by the reader", c.size, c.step)
		}
	}
}

// TestStreamReaderSummedCatchesCorruption flips one byte in the middle of
// a frame that arrives over several reads (the reader computes its CRC
// read by read): the decoder must report exactly that frame corrupt.
func TestStreamReaderSummedCatchesCorruption(t *testing.T) {
	const size, n = 460800, 5
	for _, step := range []int{4096, 65536, 100003} {
		for _, at := range []int{frame.PayloadHeaderLen + 5, 300001, 460800 - 3} {
			data := frames(t, size, n)
			flen := len(data) / n
			data[2*flen+at] ^= 0x10
			corrupt, summed := readSummed(t, NewStreamReader(chunked(data, step)))
			if summed == 0 {
				t.Fatalf("step %d: no frame summed by the reader", step)
			}
			for i, bad := range corrupt {
				if bad != (i == 2) {
					t.Fatalf("step %d, byte %d of frame 2 flipped: frame %d corrupt=%v", step, at, i, bad)
				}
			}
		}
	}
}

// TestStreamReaderSumReadSize: while summing, a large frame is read at
// most sumRead bytes per call, so that each read's bytes are folded while
// they are in L2; without summing the reader asks for the whole rest.
func TestStreamReaderSumReadSize(t *testing.T) {
	data := frames(t, 4<<20, 3)
	for _, sum := range []bool{true, false} {
		most, rest := 0, data
		sr := NewStreamReader(func(b []byte) (int, error) {
			if len(rest) == 0 {
				return 0, io.EOF
			}
			most = max(most, len(b))
			n := copy(b, rest)
			rest = rest[n:]
			return n, nil
		})
		if sum {
			sr.SumPayloads()
		}
		views := make([][]byte, 4)
		got := 0
		for {
			n, err := sr.Next(views)
			for i, v := range views[:n] {
				c := frame.PayloadCRC{}
				if sum {
					c = sr.Sums()[i]
				}
				if _, ok, bad := frame.DecodePayloadSummed(v, c); !ok || bad {
					t.Fatalf("sum=%v: frame %d ok=%v corrupt=%v", sum, got, ok, bad)
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
		if got != 3 {
			t.Fatalf("sum=%v: %d frames", sum, got)
		}
		if sum && most > sumRead {
			t.Errorf("summing: a read asked for %d bytes, more than %d", most, sumRead)
		}
		if !sum && most <= sumRead {
			t.Errorf("not summing: reads asked for at most %d bytes; want the rest of the frame", most)
		}
	}
}
