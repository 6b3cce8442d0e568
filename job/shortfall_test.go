package job

import (
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/engine"
	"github.com/wpg-dev/wpg/report"
)

// A --duration run under its rate because the schedule skipped the
// intervals of a stall is not "the path did not keep up": the stalls'
// note already says what happened, and this one says that they account
// for the missing frames. A shortfall the stalls do not explain still
// blames the path, with where the time went.
func TestShortfallNoteNamesTheStalls(t *testing.T) {
	res := &engine.Result{Workers: []engine.WorkerResult{{Seconds: 2, CPUSeconds: 1.96}}}
	// 1 Mpps for 2 s: 7754 frames missing, 8425 intervals skipped.
	rep := &report.Report{TargetPPS: 1e6, Seconds: 2, Frames: 1992246, AchievedRatio: 0.996123}
	if n := shortfallNote(rep, 8425, res); !strings.Contains(n, "the 8425 frame intervals the schedule skipped after stalls (above) account for the 7754 frames missing") || strings.Contains(n, "did not keep up") {
		t.Errorf("stalls: %q", n)
	}
	// The same shortfall with only 100 intervals skipped: the path.
	if n := shortfallNote(rep, 100, res); !strings.HasPrefix(n, "the path did not keep up: 99.61 % of the target rate; the sender threads were busy 98 %") {
		t.Errorf("path: %q", n)
	}
	if n := shortfallNote(rep, 0, res); !strings.HasPrefix(n, "the path did not keep up") {
		t.Errorf("no stalls: %q", n)
	}
}
