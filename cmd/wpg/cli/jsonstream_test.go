package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/hdrlog"
)

// streamEvents parses the lines of a --json-stream output, failing the
// test on one that is not a JSON object with an event.
func streamEvents(t *testing.T, out string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	for i, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev["event"] == nil || ev["data"] == nil {
			t.Fatalf("line %d is no event (%v): %q", i+1, err, line)
		}
		evs = append(evs, ev)
	}
	return evs
}

// TestSendJSONStream (issue #29): --json-stream prints, as iperf3's, one
// JSON object a line as the run goes: a start event, an interval event
// per --interval (1s when not given) and the end event with the report;
// --hdr-out with --interval writes a histogram per interval. bench
// --repeat numbers its runs' events.
func TestSendJSONStream(t *testing.T) {
	hdr := filepath.Join(t.TempDir(), "lateness.hdr")
	out, errs, code := wpg(t, "send", "--backend", "null", "--rate", "20kpps", "--duration", "350ms", "--interval", "100ms", "--json-stream", "--hdr-out", hdr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	evs := streamEvents(t, out)
	n := len(evs)
	if n < 5 || evs[0]["event"] != "start" || evs[n-1]["event"] != "end" {
		t.Fatalf("%d events: want a start, three intervals or more and the end:\n%s", n, out)
	}
	var frames float64
	for _, ev := range evs[1 : n-1] {
		if ev["event"] != "interval" {
			t.Fatalf("event %v between start and end", ev["event"])
		}
		frames += ev["data"].(map[string]any)["frames"].(float64)
	}
	end := evs[n-1]["data"].(map[string]any)
	if end["schema"] != "wpg.report/v2" || end["frames"] != frames || len(end["intervals"].([]any)) != n-2 {
		t.Errorf("end: schema %v, %v frames (intervals: %v), %d intervals, want %d", end["schema"], end["frames"], frames, len(end["intervals"].([]any)), n-2)
	}
	b, err := os.ReadFile(hdr)
	if err != nil {
		t.Fatal(err)
	}
	if logged, err := hdrlog.Read(bytes.NewReader(b)); err != nil || len(logged) != n-2 {
		t.Errorf("--hdr-out logged %d histograms for %d intervals (%v)", len(logged), n-2, err)
	}
	// Without --interval: 1 s intervals.
	out, errs, code = wpg(t, "send", "--backend", "null", "--count", "1000", "--json-stream")
	if evs := streamEvents(t, out); code != 0 || evs[0]["data"].(map[string]any)["interval_seconds"] != 1.0 {
		t.Errorf("exit %d, start %v: %s", code, evs[0], errs)
	}
	out, errs, code = wpg(t, "bench", "--backend", "null", "--duration", "100ms", "--interval", "50ms", "--repeat", "2", "--json-stream")
	runs := map[float64]bool{}
	for _, ev := range streamEvents(t, out) {
		if ev["event"] == "interval" {
			runs[ev["run"].(float64)] = true
		}
	}
	if code != 0 || !runs[1] || !runs[2] {
		t.Errorf("bench --repeat 2: exit %d, interval events of runs %v: %s", code, runs, errs)
	}
}
