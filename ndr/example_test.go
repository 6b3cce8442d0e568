package ndr_test

import (
	"context"
	"fmt"
	"log"
	"time"

	_ "github.com/wpg-dev/wpg/backend/afpacket" // the trials' sender and receiver
	"github.com/wpg-dev/wpg/ndr"
	"github.com/wpg-dev/wpg/pace"
)

// A search against a path that forwards up to 750,000 frames/s and drops
// the rest.
func ExampleSearch() {
	trial := func(_ context.Context, rate float64, d time.Duration) (ndr.Outcome, error) {
		sent := uint64(rate * d.Seconds())
		recv := sent
		if rate > 750_000 {
			recv = uint64(float64(sent) * 750_000 / rate)
		}
		return ndr.Outcome{Sent: sent, Received: recv, AchievedPPS: rate}, nil
	}
	res, err := ndr.Search(context.Background(), ndr.Config{MaxRate: 2e6, Resolution: 0.01, Trial: time.Second}, trial)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("throughput %.0f frames/s after %d trials\n", res.ThroughputPPS, len(res.Trials))
	// Output: throughput 750000 frames/s after 10 trials
}

// The RFC 2544 throughput of this host's veth path at two frame sizes, in
// one call (as root: Run creates a namespace with a veth pair and removes
// it on return). Not run as a test: it needs root; TestRunOnVeth runs it.
func ExampleRun() {
	maxRate, err := pace.ParseRate("1Mpps")
	if err != nil {
		log.Fatal(err)
	}
	rep, err := ndr.Run(context.Background(), ndr.Setup{
		Sizes:   []int{64, 1518},
		MaxRate: maxRate,
		Search:  ndr.Config{Trial: 2 * time.Second, Resolution: 0.01},
		OnTrial: func(size int, t ndr.Trial) {
			fmt.Printf("%d B at %.0f frames/s: %d of %d received\n", size, t.Rate, t.Received, t.Sent)
		},
	})
	if err != nil {
		log.Fatal(err) // the report, when not nil, holds what was found before the error
	}
	for _, s := range rep.Sizes {
		fmt.Printf("%d B: %.0f frames/s, %.3f Gbit/s on the wire\n", s.Size, s.ThroughputPPS, s.ThroughputBPS/1e9)
	}
}
