package frame

import "testing"

// TestSignatureWorkers: the signature carries the sender's worker count
// in the byte above a 56-bit sequence number; one worker is the old
// signature bit for bit.
func TestSignatureWorkers(t *testing.T) {
	b := make([]byte, 64)
	for _, c := range []struct {
		in      Signature
		workers int
		word    uint64
	}{
		{Signature{Stream: 7, Seq: 12345, TxNs: 99}, 1, 12345},
		{Signature{Stream: 7, Seq: 12345, Workers: 1}, 1, 12345},
		{Signature{Stream: 7, Seq: 12345, Workers: 2}, 2, 1<<56 | 12345},
		{Signature{Stream: 7, Seq: MaxSeq, Workers: 256}, 256, 255<<56 | MaxSeq},
		{Signature{Stream: 7, Seq: 5, Workers: 257}, 1, 5}, // out of range: one worker
	} {
		PutSignature(b, c.in)
		s, ok := ParseSignature(b)
		if !ok || s.Stream != c.in.Stream || s.Seq != c.in.Seq || s.Workers != c.workers || s.TxNs != c.in.TxNs {
			t.Errorf("%+v: parsed %+v ok=%v", c.in, s, ok)
		}
		if w := SeqWord(c.in.Seq, c.in.Workers); w != c.word {
			t.Errorf("%+v: SeqWord %#x, want %#x", c.in, w, c.word)
		}
	}
}
