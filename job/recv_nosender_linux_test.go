package job_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/wpg-dev/wpg/backend/pipe"
	_ "github.com/wpg-dev/wpg/backend/shm"
	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/report"
)

// TestReceiveDurationBoundsTheWaitForASender (issue #29): a local path's
// receiver waits for its sender on the listening socket, and that wait
// ignored Duration: `wpg recv --listen SOCK --duration 1s` with no sender
// ran until killed, and so did one on a FIFO (Ctrl-C too). The duration
// counts from Receive: with no sender by
// then the reception ends, stopped by "duration", with nothing received
// (and, with Expect, every frame missing).
func TestReceiveDurationBoundsTheWaitForASender(t *testing.T) {
	dir := t.TempDir()
	for i, spec := range []job.RecvSpec{
		{Backend: "shm", Listen: filepath.Join(dir, "rx.sock")},
		{Backend: "shm", Listen: filepath.Join(dir, "rx.sock"), Expect: 5},
		// A FIFO's reader waits for a writer in open(2), which no
		// signal ends.
		{Backend: "pipe", FIFO: filepath.Join(dir, "rx.fifo")},
	} {
		spec.Duration = 200 * time.Millisecond
		expect := spec.Expect
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		done := make(chan struct{})
		go func() {
			defer close(done)
			r, err := job.Receive(ctx, spec, job.Env{})
			if err != nil {
				t.Errorf("%d: Receive with no sender: %v", i, err)
				return
			}
			if r.Sender() {
				t.Error("Sender() true with no sender")
			}
			res, err := r.Wait(nil, 0)
			var failed *report.CheckFailure
			switch {
			case expect == 0 && err != nil, expect > 0 && !errors.As(err, &failed):
				t.Errorf("expect %d: Wait error %v", expect, err)
			}
			if res.Stop != "duration" || res.Frames != 0 || res.Missing != expect || res.Schema == "" || res.Streams == nil {
				t.Errorf("expect %d: result %+v: want stopped by duration, nothing received", expect, res)
			}
		}()
		select {
		case <-done:
		case <-ctx.Done():
			t.Fatal("the receiver waited for a sender past its --duration (a minute)")
		}
		cancel()
	}
}
