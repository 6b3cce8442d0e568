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

// TestSizesGivenTwice: a size given twice is refused up front: each table
// is a size's, so the matrix made two identical tables each holding both
// sizes' runs (three rows of null at one size, its spread over 3 runs
// with --repeat 1).
func TestSizesGivenTwice(t *testing.T) {
	err := Config{Sizes: []int64{64, 1 << 20, 64, 64}}.Validate()
	if err == nil || !strings.Contains(err.Error(), "size 64 is given more than once") || strings.Count(err.Error(), "more than once") != 1 {
		t.Errorf("64, 1 MiB, 64, 64: %v; want one refusal of size 64", err)
	}
	res, err := Run(context.Background(), Config{Only: []string{"null"}, Sizes: []int64{64, 64}, Duration: 10 * time.Millisecond, Repeat: 1}, job.Env{})
	if err == nil || (res != nil && len(res.Tables) > 0) {
		t.Errorf("Run with 64 twice: %v, %+v; want the refusal and no tables", err, res)
	}
}

// TestIntervalFloorMatrix: the matrix refuses a sampling period under
// report.MinInterval (a period of nanoseconds grows each run's intervals
// without bound).
func TestIntervalFloorMatrix(t *testing.T) {
	if err := (Config{Interval: time.Nanosecond}).Validate(); err == nil || !strings.Contains(err.Error(), "interval 1ns: give 50ms or more") {
		t.Errorf("1 ns: %v", err)
	}
	if err := (Config{Interval: 50 * time.Millisecond}).Validate(); err != nil {
		t.Errorf("50 ms: %v", err)
	}
}
