package peer

import (
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/frame"
)

// TestStreamReaderRefusesHugeHeader: a frame header claiming 4 GiB is a
// corrupted frame: nothing is allocated for it, what arrived is handed over
// as one frame that fails its check, and Next then fails with the offset
// and the limit.
func TestStreamReaderRefusesHugeHeader(t *testing.T) {
	good := frames(t, 64, 3)
	bad := append([]byte(nil), good[:frame.PayloadHeaderLen+64]...)
	binary.LittleEndian.PutUint32(bad[24:], 0xffffffff) // payload length 4 GiB - 1
	for _, max := range []int{0, 96} {
		sr := NewStreamReader(chunked(append(append([]byte(nil), good...), bad...), 1<<20))
		sr.Max = max
		views := make([][]byte, 16)
		var ok, corrupt int
		var err error
		for err == nil {
			var n int
			n, err = sr.Next(views)
			for _, v := range views[:n] {
				if _, isFrame, bad := frame.DecodePayload(v); bad {
					corrupt++
				} else if isFrame {
					ok++
				}
			}
		}
		if ok != 3 || corrupt != 1 || errors.Is(err, io.EOF) || !strings.Contains(err.Error(), "claims 4294967327 bytes") || !strings.Contains(err.Error(), "at byte 288") {
			t.Fatalf("max %d: %d intact, %d corrupted, err %v", max, ok, corrupt, err)
		}
		if len(sr.buf) > 1<<20 {
			t.Fatalf("max %d: the buffer grew to %d bytes for a corrupted header", max, len(sr.buf))
		}
	}
}

// TestStreamReaderMaxIsInclusive: a frame of exactly the announced size
// is read; one byte more is corruption.
func TestStreamReaderMaxIsInclusive(t *testing.T) {
	data := frames(t, 4096, 2)
	l := frame.PayloadHeaderLen + 4096
	for _, c := range []struct {
		max  int
		want bool
	}{{l, true}, {l - 1, false}} {
		sr := NewStreamReader(chunked(data, 1000))
		sr.Max = c.max
		views := make([][]byte, 4)
		got := 0
		var err error
		for err == nil {
			var n int
			n, err = sr.Next(views)
			for _, v := range views[:n] {
				if _, _, corrupt := frame.DecodePayload(v); !corrupt {
					got++
				}
			}
		}
		if ok := got == 2 && errors.Is(err, io.EOF); ok != c.want {
			t.Fatalf("max %d: %d intact frames, err %v", c.max, got, err)
		}
	}
	if MaxFrameLen != 1<<30+32 {
		t.Fatalf("MaxFrameLen %d: want a 1 GiB payload and its header", MaxFrameLen)
	}
}
