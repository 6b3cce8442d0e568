package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/job"
)

// TestSizesBelowAFrame: a size no path can send (below 64 bytes) is refused
// up front, not run in every cell to one error each.
func TestSizesBelowAFrame(t *testing.T) {
	for _, s := range []int64{1, 63, 1<<30 + 1} {
		err := Config{Sizes: []int64{s}}.Validate()
		if err == nil || !strings.Contains(err.Error(), "64 B") {
			t.Errorf("size %d: %v; want a refusal naming the 64-byte minimum", s, err)
		}
	}
	if err := (Config{Sizes: []int64{64, 1 << 30}}).Validate(); err != nil {
		t.Errorf("64 B and 1 GiB: %v", err)
	}
}

// TestRowSkippedOnce: a network row without root is skipped once, for
// every size, without a second line per size it would not have run at.
func TestRowSkippedOnce(t *testing.T) {
	res, err := Run(context.Background(), Config{Only: []string{"afpacket"}, Sizes: []int64{64, 1 << 20}, Network: false, Duration: 10 * time.Millisecond, Repeat: 1}, job.Env{})
	if res == nil {
		t.Fatalf("no result: %v", err)
	}
	var n int
	for _, s := range res.Skipped {
		if s.Path == "afpacket" {
			n++
			if s.Size != 0 || !strings.Contains(s.Reason, "root") {
				t.Errorf("skip %+v: want the one for every size, saying it needs root", s)
			}
		}
	}
	if n != 1 {
		t.Errorf("afpacket skipped %d times: %+v", n, res.Skipped)
	}
}
