//go:build linux

package shmring_test

import (
	"fmt"
	"time"

	"github.com/wpg-dev/wpg/shmring"
)

// A producer writes three frames in place and a consumer reads them in
// place. Across processes the consumer would Open the descriptor it
// received over a unix socket instead of sharing the *Ring.
func Example() {
	ring, err := shmring.Create(shmring.Config{Slots: 4, SlotSize: 64})
	if err != nil {
		panic(err)
	}
	defer ring.Close()

	p := ring.Producer()
	bufs := make([][]byte, 3)
	n, _ := p.Reserve(bufs)
	lens := make([]int, n)
	for i := range n {
		lens[i] = copy(bufs[i], fmt.Sprintf("frame %d", i))
	}
	p.Commit(lens)
	p.Close()

	c := ring.Consumer()
	views := make([][]byte, 8)
	for {
		n, err := c.Next(views, time.Second)
		if err != nil {
			fmt.Println(err)
			break
		}
		for _, v := range views[:n] {
			fmt.Println(string(v))
		}
	}
	// Output:
	// frame 0
	// frame 1
	// frame 2
	// EOF
}
