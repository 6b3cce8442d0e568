package e2e

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// qa8Interval is an intervals[] entry as the tests here read it.
type qa8Interval struct {
	Start     float64 `json:"start"`
	End       float64 `json:"end"`
	Lost      *int64  `json:"lost"`
	Corrupted *uint64 `json:"corrupted"`
	LatencyNs int64   `json:"latency_p99_ns"`
}

// TestQA8IntervalsCarryLoss: every --interval entry of a local path with
// its own receiver carries the receiver's loss, the first ones too (they
// end before the receiver's first progress message, at about 250 ms, and
// used to have none), and the entries' loss sums to the run's. The
// matrix's runs[].intervals carry it as well (they had none at all), and
// both fall on the period's multiples of the run's own clock.
func TestQA8IntervalsCarryLoss(t *testing.T) {
	wpg := testbed.Wpg(t)
	args := []string{"send", "--backend", "shm", "--duration", "600ms", "--interval", "100ms", "--json"}
	out, err := exec.Command(wpg, args...).Output()
	if err != nil {
		t.Fatalf("wpg %v: %v", args, err)
	}
	var d struct {
		Verification struct {
			Lost int64 `json:"lost"`
		} `json:"verification"`
		Intervals []qa8Interval `json:"intervals"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("wpg %v: %v\n%s", args, err, out)
	}
	checkLoss(t, args, d.Intervals, d.Verification.Lost)
	checkPeriods(t, args, d.Intervals, 0.1)
	// The receiver sends its progress as often as the intervals (it used
	// to every 250 ms whatever --interval, so that two intervals in three
	// of 100 ms had no latency and a loss of 0 that was only stale).
	withLatency := 0
	for _, in := range d.Intervals {
		if in.LatencyNs > 0 {
			withLatency++
		}
	}
	if withLatency*2 <= len(d.Intervals) {
		t.Errorf("wpg %v: %d of %d intervals have the receiver's latency: want most", args, withLatency, len(d.Intervals))
	}

	args = []string{"bench", "--paths", "shm", "--sizes", "64", "--repeat", "1", "--duration", "500ms", "--interval", "100ms", "--json"}
	out, err = exec.Command(wpg, args...).Output()
	if err != nil {
		t.Fatalf("wpg %v: %v", args, err)
	}
	var m struct {
		Tables []struct {
			Rows []struct {
				Runs []struct {
					Verified  string        `json:"verified"`
					Intervals []qa8Interval `json:"intervals"`
				} `json:"runs"`
			} `json:"rows"`
		} `json:"tables"`
	}
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("wpg %v: %v\n%s", args, err, out)
	}
	n := 0
	for _, tb := range m.Tables {
		for _, r := range tb.Rows {
			for _, run := range r.Runs {
				if run.Verified != "ok" {
					t.Fatalf("wpg %v: run not verified: %q", args, run.Verified)
				}
				checkLoss(t, args, run.Intervals, 0) // verified: nothing lost
				checkPeriods(t, args, run.Intervals, 0.1)
				n++
			}
		}
	}
	if n == 0 {
		t.Fatalf("wpg %v: no runs in\n%s", args, out)
	}
}

func checkLoss(t *testing.T, args []string, list []qa8Interval, total int64) {
	t.Helper()
	if len(list) < 3 {
		t.Fatalf("wpg %v: %d intervals, want at least 3 of 100 ms", args, len(list))
	}
	var sum int64
	for i, in := range list {
		if in.Lost == nil || in.Corrupted == nil {
			t.Errorf("wpg %v: interval %d (%.2f-%.2f s) has no lost or corrupted", args, i, in.Start, in.End)
			continue
		}
		sum += *in.Lost
	}
	if sum != total {
		t.Errorf("wpg %v: the intervals' lost sums to %d, the run lost %d", args, sum, total)
	}
}

// checkPeriods: every interval but the last ends at or after its multiple
// of the period on the run's own clock (a sample is taken once the run's
// clock has reached it), and each starts where the one before ended. The
// matrix's intervals came from a ticker started before the run, so its
// first closed at 0.07 s of a 0.1 s period.
func checkPeriods(t *testing.T, args []string, list []qa8Interval, period float64) {
	t.Helper()
	for i, in := range list {
		if i > 0 && in.Start != list[i-1].End {
			t.Errorf("wpg %v: interval %d starts at %.6f s, the one before ended at %.6f s", args, i, in.Start, list[i-1].End)
		}
		if due := float64(i+1) * period; i < len(list)-1 && in.End < due-1e-9 {
			t.Errorf("wpg %v: interval %d ends at %.6f s, before %.1f s on the run's clock", args, i, in.End, due)
		}
	}
}

// TestLocalPathIntervalsCarryJitter: a local path's receiver sends its
// RFC 3550 jitter with its progress, so the sender's live interval events
// (--json-stream) and lines show it as a port pair's do, not only the
// last one (from the receiver's answer).
func TestLocalPathIntervalsCarryJitter(t *testing.T) {
	wpg := testbed.Wpg(t)
	args := []string{"send", "--backend", "shm", "--size", "1KiB", "--rate", "5kpps", "--duration", "1500ms", "--interval", "300ms", "--json-stream"}
	out, err := exec.Command(wpg, args...).Output()
	if err != nil {
		t.Fatalf("wpg %v: %v", args, err)
	}
	var intervals, withJitter int
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var ev struct {
			Event string `json:"event"`
			Data  struct {
				JitterNs int64 `json:"jitter_ns"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("wpg %v: %v: %q", args, err, line)
		}
		if ev.Event == "interval" {
			intervals++
			if ev.Data.JitterNs > 0 {
				withJitter++
			}
		}
	}
	// The receiver's first progress comes some 300 ms in: the first
	// interval may have none yet; the others must.
	if intervals < 4 || withJitter < intervals-1 {
		t.Errorf("wpg %v: %d of %d interval events carry jitter_ns; want all but the first at most\n%s", args, withJitter, intervals, out)
	}

	args = []string{"send", "--backend", "shm", "--size", "1KiB", "--rate", "5kpps", "--duration", "1500ms", "--interval", "300ms"}
	text, err := exec.Command(wpg, args...).Output()
	if err != nil {
		t.Fatalf("wpg %v: %v", args, err)
	}
	lines := 0
	for _, l := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(l, "[") && strings.Contains(l, "latency p99") && strings.Contains(l, "  jitter ") {
			lines++
		}
	}
	if lines < 3 {
		t.Errorf("wpg %v: %d interval lines with a latency and a jitter; want all but the first at most:\n%s", args, lines, text)
	}
}
