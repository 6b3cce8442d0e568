package recv_test

import (
	"fmt"
	"os"

	"github.com/wpg-dev/wpg/recv"
)

// A stream whose frames 3 and 4 were lost, 6 came twice and 2 came late.
func ExampleTracker() {
	t := recv.NewTracker()
	for _, seq := range []uint64{0, 1, 5, 2, 6, 6, 7} {
		t.Observe(9, seq, 0, 0, 100)
	}
	t.Unsigned(60) // e.g. an ARP frame of someone else
	r := t.Result()
	fmt.Printf("frames %d lost %d duplicated %d reordered %d unsigned %d ok %v\n",
		r.Frames, r.Lost, r.Duplicated, r.Reordered, r.Unsigned, r.OK())
	// Output:
	// frames 6 lost 2 duplicated 1 reordered 1 unsigned 1 ok false
}

// The human table of a Result.
func ExampleResult_WriteTable() {
	t := recv.NewTracker()
	for seq := uint64(0); seq < 1000; seq++ {
		if seq != 500 {
			t.Observe(0, seq, 0, 0, 64)
		}
	}
	t.Result().WriteTable(os.Stdout)
	// Output:
	// frames             999  (63.936 kB)
	// lost               1
	// duplicated         0
	// reordered          0
	// corrupted          0
	// without signature  0  (0 B, not counted above)
	//
	//   stream  frames  bytes  lost  dup  reord  corr  next seq  lat mean  jitter
	//        0     999  63936     1    0      0     0      1000         -       -
}
