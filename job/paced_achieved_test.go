package job

import (
	"math"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/engine"
)

// A paced run sends each worker's first frame at once, and the frame due
// exactly at the stop may go or not: a run on time sent all its frames
// due whichever way that went. Short or slow runs on time read "1pps =
// 1.0 pps, achieved 199.72 %" (2 frames, --duration 1s) and 122.33 % (3
// frames, Ctrl-C at 2.452 s); a real shortfall or an early sender still
// shows.
func TestPacedAchievedCountsTheFirstFrames(t *testing.T) {
	for _, c := range []struct {
		name    string
		frames  uint64
		workers int
		seconds float64
		dur     time.Duration
		target  float64
		stop    engine.Stop
		want    float64
	}{
		{"1 pps for 1 s, the frame at 1 s sent", 2, 1, 1.001, time.Second, 1, engine.StopDuration, 1},
		{"1 pps for 1 s, the frame at 1 s not sent", 1, 1, 1.001, time.Second, 1, engine.StopDuration, 1},
		{"1 pps for 2 s", 3, 1, 2.002, 2 * time.Second, 1, engine.StopDuration, 1},
		{"1 pps, Ctrl-C at 2.452 s", 3, 1, 2.452, 0, 1, engine.StopSignal, 1},
		{"10 pps for 1 s", 11, 1, 1.002, time.Second, 10, engine.StopDuration, 1},
		{"two workers, 1 pps each", 4, 2, 1.001, time.Second, 2, engine.StopDuration, 1},
		{"10 kpps for 1 s", 10001, 1, 1.0005, time.Second, 1e4, engine.StopDuration, 1},
		{"10 kpps for 1 s, 10 short", 9990, 1, 1.0005, time.Second, 1e4, engine.StopDuration, 0.999},
		{"falls short", 5001, 1, 1.0, time.Second, 1e4, engine.StopDuration, 0.5001},
		{"sends early", 5, 1, 1.001, time.Second, 1, engine.StopDuration, 2.5},
		// --count: N frames take (N-W)/R.
		{"100 frames at 100 pps", 100, 1, 0.99, 0, 100, engine.StopCount, 1},
		{"one frame", 1, 1, 0.00005, 0, 1e3, engine.StopCount, 1},
	} {
		res := &engine.Result{Frames: c.frames, Seconds: c.seconds, Stop: c.stop, Workers: make([]engine.WorkerResult, c.workers)}
		if got := pacedAchieved(res, c.target, c.dur); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: achieved %.6f, want %.6f", c.name, got, c.want)
		}
	}
}
