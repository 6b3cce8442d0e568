package ndr_test

import (
	"context"
	"fmt"
	"time"

	"github.com/wpg-dev/wpg/ndr"
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
