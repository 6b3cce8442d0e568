package frame_test

import (
	"fmt"

	"github.com/wpg-dev/wpg/frame"
)

// Render two 460,800-byte payload frames (one raw video frame each) and
// verify them the way wpg recv does.
func ExampleNewPayloadSource() {
	src, err := frame.NewPayloadSource(frame.PayloadConfig{Size: 460800, Count: 2}, 0, 1)
	if err != nil {
		panic(err)
	}
	bufs := [][]byte{make([]byte, src.MaxFrame()), make([]byte, src.MaxFrame())}
	lens := make([]int, 2)
	n := src.Render(bufs, lens, 1000)
	for i := 0; i < n; i++ {
		sig, ok, corrupt := frame.DecodePayload(bufs[i][:lens[i]])
		fmt.Println(lens[i], sig.Seq, ok, corrupt)
	}
	// A flipped byte is caught by the checksum.
	bufs[1][100000] ^= 1
	_, _, corrupt := frame.DecodePayload(bufs[1][:lens[1]])
	fmt.Println("corrupt:", corrupt)
	// Output:
	// 460832 0 true false
	// 460832 1 true false
	// corrupt: true
}
