package frame

import (
	"hash/crc32"
	"testing"
)

func summedFrame(t *testing.T, size int, mode VerifyMode) []byte {
	t.Helper()
	src, err := NewPayloadSource(PayloadConfig{Size: size, Verify: mode}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	buf := [][]byte{make([]byte, src.MaxFrame())}
	lens := []int{0}
	src.Render(buf, lens, 1)
	return buf[0][:lens[0]]
}

func payloadCRC(b []byte) PayloadCRC {
	return PayloadCRC{Sum: crc32.Update(0, crc32.MakeTable(crc32.Castagnoli), b[PayloadHeaderLen:]), Valid: true}
}

// TestDecodePayloadSummed: the receiver's CRC replaces the decoder's pass,
// and every other check stays: a frame is corrupt when the receiver's CRC
// of what arrived differs from the sender's, when a stamp or the length is
// wrong, whatever the receiver summed.
func TestDecodePayloadSummed(t *testing.T) {
	for _, size := range []int{64, 4096, 460800} {
		b := summedFrame(t, size, VerifyOn)
		if _, ok, bad := DecodePayloadSummed(b, payloadCRC(b)); !ok || bad {
			t.Fatalf("size %d: intact frame: ok=%v corrupt=%v", size, ok, bad)
		}
		if _, ok, bad := DecodePayloadSummed(b, PayloadCRC{}); !ok || bad {
			t.Fatalf("size %d: no sum (DecodePayload): ok=%v corrupt=%v", size, ok, bad)
		}
		// A byte damaged in transit: the receiver summed what arrived.
		d := append([]byte(nil), b...)
		d[PayloadHeaderLen+(len(d)-PayloadHeaderLen)/2+1] ^= 1
		if _, _, bad := DecodePayloadSummed(d, payloadCRC(d)); !bad {
			t.Fatalf("size %d: damaged byte not caught", size)
		}
		if _, _, bad := DecodePayloadSummed(d, PayloadCRC{}); !bad {
			t.Fatalf("size %d: damaged byte not caught without a sum", size)
		}
		// A stale stamp with a matching sum is still caught.
		if size >= 2*StampStride {
			d = append([]byte(nil), b...)
			d[PayloadHeaderLen+StampStride] ^= 1
			if _, _, bad := DecodePayloadSummed(d, payloadCRC(d)); !bad {
				t.Fatalf("size %d: stale stamp not caught", size)
			}
		}
		// A truncated frame.
		if _, _, bad := DecodePayloadSummed(b[:len(b)-8], payloadCRC(b[:len(b)-8])); !bad {
			t.Fatalf("size %d: truncated frame not caught", size)
		}
	}
	// --verify off frames carry no checksum: the sum is not compared.
	b := summedFrame(t, 460800, VerifyOff)
	if _, ok, bad := DecodePayloadSummed(b, PayloadCRC{Sum: 1, Valid: true}); !ok || bad {
		t.Fatalf("verify-off frame: ok=%v corrupt=%v", ok, bad)
	}
	if _, ok, _ := DecodePayloadSummed([]byte("not a frame at all, not a frame at all, not a frame at all......"), PayloadCRC{Valid: true}); ok {
		t.Fatal("a non-frame decoded")
	}
}
