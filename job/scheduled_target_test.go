package job

import (
	"math"
	"os"
	"testing"

	"github.com/wpg-dev/wpg/report"
	"github.com/wpg-dev/wpg/template"
)

// A template whose streams keep their own schedules is measured against
// its timetable, not against the streams' long-run rates added up:
// examples/stream-rates.wpg.yaml sent on time (1150 frames, the last due
// at 499.5 ms) was "target 15.717 k pps, achieved 14.63 %" and failed
// --fail-under 0.9.
func TestScheduledTargetOfStreamRates(t *testing.T) {
	data, err := os.ReadFile("../examples/stream-rates.wpg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := template.Parse("stream-rates.wpg.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	src, err := template.Compile(spec, template.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	longRun := src.FramesPerSecond()
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
	for _, c := range []struct {
		name            string
		frames          float64
		seconds         float64
		target, achieve float64
	}{
		// Every frame sent, the run 1 ms longer than the timetable.
		{"on time", 1150, 0.5005, 1150 / 0.4995, 0.4995 / 0.5005},
		// Every frame sent, twice as slow: half.
		{"late", 1150, 0.999, 1150 / 0.4995, 0.4995 / 0.999},
		// --duration 100ms: 351 frames were due by then.
		{"stopped early", 351, 0.1, 3510, 1},
		{"stopped early, behind", 300, 0.1, 3510, 300.0 / 351},
	} {
		rep := &report.Report{TargetPPS: longRun, PPS: c.frames / c.seconds}
		scheduledTarget(rep, src.Schedule(), c.seconds)
		if !near(rep.TargetPPS, c.target) || !near(rep.AchievedRatio, c.achieve) {
			t.Errorf("%s: target %.3f achieved %.6f, want %.3f and %.6f (long-run rate %.3f)", c.name, rep.TargetPPS, rep.AchievedRatio, c.target, c.achieve, longRun)
		}
	}
}
