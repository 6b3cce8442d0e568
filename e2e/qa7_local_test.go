package e2e

import (
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// TestQA7IntervalsEndWithTheRun: `wpg bench --duration 1s --interval
// 250ms` closes its last interval with the run: no interval starts at the
// planned end. A sample taken a hair before the end used to leave a fifth
// interval of a few hundred frames over a tenth of a millisecond
// ("[  1.00-  1.00 s]  256 frames  1.7 M pps" after lines of 200 M pps),
// which reads as a collapse at the end. The intervals still sum to the
// totals.
func TestQA7IntervalsEndWithTheRun(t *testing.T) {
	wpg := testbed.Wpg(t)
	for _, args := range [][]string{
		{"bench", "--backend", "null", "--duration", "1s", "--interval", "250ms", "--json"},
		{"send", "--backend", "memcpy", "--size", "1KiB", "--duration", "1s", "--interval", "250ms", "--json"},
	} {
		out, err := exec.Command(wpg, args...).Output()
		if err != nil {
			t.Fatalf("wpg %v: %v", args, err)
		}
		var d struct {
			Frames    uint64  `json:"frames"`
			Seconds   float64 `json:"seconds"`
			Intervals []struct {
				Start  float64 `json:"start"`
				End    float64 `json:"end"`
				Frames uint64  `json:"frames"`
			} `json:"intervals"`
		}
		if err := json.Unmarshal(out, &d); err != nil {
			t.Fatalf("wpg %v: %v\n%s", args, err, out)
		}
		if len(d.Intervals) == 0 {
			t.Fatalf("wpg %v: no intervals", args)
		}
		var sum uint64
		for i, in := range d.Intervals {
			sum += in.Frames
			if in.Start >= 1.0 {
				t.Errorf("wpg %v: interval %d starts at %.6f s, at or after the run's planned end (1 s): %+v", args, i, in.Start, d.Intervals)
			}
		}
		// samples at 250, 500 and 750 ms at most; the end closes the last
		if len(d.Intervals) > 4 {
			t.Errorf("wpg %v: %d intervals in a 1 s run of 250 ms periods, at most 4: %+v", args, len(d.Intervals), d.Intervals)
		}
		if sum != d.Frames {
			t.Errorf("wpg %v: intervals sum to %d frames, the report has %d", args, sum, d.Frames)
		}
		if last := d.Intervals[len(d.Intervals)-1]; last.End < d.Seconds-1e-6 {
			t.Errorf("wpg %v: the last interval ends at %.6f s, the run at %.6f s", args, last.End, d.Seconds)
		}
	}
}

// TestQA7MatrixIntervalsEndWithTheRun: the matrix's runs[].intervals
// (--interval) end with the run too: a 1 s run of 250 ms periods has at
// most 4 intervals, none starting at the planned end (its ticker, started
// before the run's clock, used to tick a hair before the end and leave a
// fifth of a few hundred frames).
func TestQA7MatrixIntervalsEndWithTheRun(t *testing.T) {
	wpg := testbed.Wpg(t)
	out, err := exec.Command(wpg, "bench", "--paths", "memcpy", "--sizes", "64", "--repeat", "2", "--duration", "1s", "--interval", "250ms", "--json").Output()
	if err != nil {
		t.Fatalf("wpg bench: %v", err)
	}
	var d struct {
		Tables []struct {
			Rows []struct {
				Runs []struct {
					Frames    uint64 `json:"frames"`
					Intervals []struct {
						Start  float64 `json:"start"`
						Frames uint64  `json:"frames"`
					} `json:"intervals"`
				} `json:"runs"`
			} `json:"rows"`
		} `json:"tables"`
	}
	if err := json.Unmarshal(out, &d); err != nil || len(d.Tables) != 1 || len(d.Tables[0].Rows) != 1 || len(d.Tables[0].Rows[0].Runs) != 2 {
		t.Fatalf("%v: %s", err, out)
	}
	for i, r := range d.Tables[0].Rows[0].Runs {
		var sum uint64
		for _, in := range r.Intervals {
			sum += in.Frames
			if in.Start >= 1.0 {
				t.Errorf("run %d: an interval starts at %.6f s, at or after the planned end: %+v", i, in.Start, r.Intervals)
			}
		}
		if len(r.Intervals) > 4 {
			t.Errorf("run %d: %d intervals in a 1 s run of 250 ms periods, at most 4: %+v", i, len(r.Intervals), r.Intervals)
		}
		if len(r.Intervals) == 0 || sum != r.Frames {
			t.Errorf("run %d: intervals %+v sum to %d frames, the run has %d", i, r.Intervals, sum, r.Frames)
		}
	}
}
