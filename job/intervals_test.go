package job_test

import (
	"context"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/backend/null"
	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/report"
)

// TestRunIntervals: Run.Intervals hands each interval to its callback as
// it closes, returns them all, and they sum to the report's frames and
// bytes and end at the report's time, whatever the machine's speed (no
// count of intervals is asserted: a loaded machine may sample late).
func TestRunIntervals(t *testing.T) {
	spec := job.NewSpec()
	spec.Rate = "20kpps"
	spec.Duration = 300 * time.Millisecond
	run, err := job.Start(context.Background(), spec, job.Env{})
	if err != nil {
		t.Fatal(err)
	}
	var seen []report.Interval
	list := run.Intervals(100*time.Millisecond, func(in report.Interval) { seen = append(seen, in) })
	rep := run.Report()
	if rep == nil {
		t.Fatalf("no report: %v", run.Err())
	}
	if len(list) == 0 || len(seen) != len(list) {
		t.Fatalf("%d intervals returned, %d handed to the callback", len(list), len(seen))
	}
	var frames, bytes uint64
	for i, in := range list {
		frames += in.Frames
		bytes += in.Bytes
		if i > 0 && in.Start != list[i-1].End {
			t.Errorf("interval %d starts at %v, the one before ends at %v", i, in.Start, list[i-1].End)
		}
	}
	if frames != rep.Frames || bytes != rep.Bytes {
		t.Errorf("intervals sum to %d frames, %d bytes; the report has %d, %d", frames, bytes, rep.Frames, rep.Bytes)
	}
	if end := list[len(list)-1].End; end != rep.Seconds {
		t.Errorf("the last interval ends at %v s, the run at %v s", end, rep.Seconds)
	}
	// A period of 0 samples nothing and waits for the end.
	run2, err := job.Start(context.Background(), spec, job.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if got := run2.Intervals(0, nil); got != nil {
		t.Errorf("period 0: %d intervals", len(got))
	}
	select {
	case <-run2.Done():
	default:
		t.Error("Intervals(0, nil) returned before the run ended")
	}
}

// slowClose is the null backend's sender with a Close that takes a
// while, as an AF_PACKET sender's does (unmapping its TX ring).
type slowClose struct{ backend.Sender }

func (s slowClose) Close() error {
	time.Sleep(400 * time.Millisecond)
	return s.Sender.Close()
}

func init() {
	backend.Register(backend.Registration{
		Name: "slowclose-test", Kind: backend.KindReference, Summary: "a test's: the null backend with a slow Close",
		Open: backend.Factories{Sender: func(ctx context.Context, o backend.Options) (backend.Sender, error) {
			s, err := null.New(ctx, o)
			return slowClose{s}, err
		}}.Open,
	})
}

// TestIntervalsEndWithTheRun (issue #29): a run's intervals end when its
// frames do. Sampling went on through the senders' teardown (400 ms
// here, at 50 ms periods) and the report, closing intervals with no
// frames after the last, which the charts drew as a drop to zero.
func TestIntervalsEndWithTheRun(t *testing.T) {
	spec := job.NewSpec()
	spec.Backend, spec.Rate, spec.Count = "slowclose-test", "10kpps", 1500
	run, err := job.Start(context.Background(), spec, job.Env{})
	if err != nil {
		t.Fatal(err)
	}
	list := run.Intervals(report.MinInterval, nil)
	rep := run.Report()
	if rep == nil || len(list) == 0 {
		t.Fatalf("report %v, %d intervals (%v)", rep, len(list), run.Err())
	}
	for i, in := range list {
		if in.End > rep.Seconds || (in.Frames == 0 && i > 0) {
			t.Errorf("interval %d of %d: %.3f-%.3f s, %d frames: after the run's %.3f s, or empty", i, len(list), in.Start, in.End, in.Frames, rep.Seconds)
		}
	}
	if end := list[len(list)-1].End; end != rep.Seconds {
		t.Errorf("the last interval ends at %v s, the run at %v s", end, rep.Seconds)
	}
	if s := run.Snapshot(); s.Elapsed.Seconds() != rep.Seconds && (s.Elapsed-time.Duration(rep.Seconds*1e9)).Abs() > time.Microsecond {
		t.Errorf("the ended run's snapshot reads %v elapsed, its report %v s", s.Elapsed, rep.Seconds)
	}
}
