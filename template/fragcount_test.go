package template

import (
	"os"
	"testing"
)

// A fragmented stream's counts: StreamFrames counts the fragments rendered
// (they sum to the frames sent), StreamDatagrams the datagrams whose last
// fragment went (what a receiver can count), also when a run stops inside
// a datagram.
func TestFragmentStreamCounts(t *testing.T) {
	b, err := os.ReadFile("../examples/fragments.wpg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("fragments.wpg.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	s.Streams = s.Streams[:1] // frag4: 3 fragments a datagram
	if !s.Streams[0].Fragmented() {
		t.Fatal("frag4 is not Fragmented")
	}
	for _, tc := range []struct{ n, datagrams uint64 }{{1, 0}, {2, 0}, {3, 1}, {7, 2}, {9, 3}} {
		src, err := Compile(s, CompileOptions{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		bufs, lens := [][]byte{make([]byte, src.MaxFrame())}, []int{0}
		for range tc.n {
			if src.Render(bufs, lens, 1) != 1 {
				t.Fatal("Render made no frame")
			}
		}
		if f, d := src.StreamFrames()[0], src.StreamDatagrams()[0]; f != tc.n || d != tc.datagrams {
			t.Errorf("after %d frames: StreamFrames %d, StreamDatagrams %d; want %d and %d", tc.n, f, d, tc.n, tc.datagrams)
		}
	}
	whole, err := Parse("udp.wpg.yaml", []byte("streams:\n  - size: 64\n    ipv4: {src: 198.18.0.1, dst: 198.19.0.1}\n    udp: {src: 1, dst: 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if whole.Streams[0].Fragmented() {
		t.Error("a stream without fragment: is Fragmented")
	}
}
