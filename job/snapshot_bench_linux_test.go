package job_test

import (
	"context"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/job"
)

// BenchmarkSnapshot: the bytes a snapshot of a running job costs its
// reader, for many readers polling one run (an API client, several event
// streams): a paced null run (the pacers' lateness histogram) and a paced
// shm run whose receiver measures latency (a second histogram). Each
// snapshot used to copy both histograms whole (some 200 KiB each) however
// little had changed; run with -benchmem.
func BenchmarkSnapshot(b *testing.B) {
	for _, c := range []struct{ name, backend string }{{"paced-null", "null"}, {"paced-shm-latency", "shm"}} {
		b.Run(c.name, func(b *testing.B) {
			spec := job.NewSpec()
			spec.Backend, spec.Rate, spec.Duration = c.backend, "20kpps", time.Minute
			spec.StartReceiver = c.backend == "shm"
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			run, err := job.Start(ctx, spec, testEnv())
			if err != nil {
				b.Fatal(err)
			}
			defer func() { run.Stop(); <-run.Done() }()
			// Wait until both histograms hold something.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				s := run.Snapshot()
				if s.Lateness.Count > 0 && (c.backend != "shm" || s.Receiver != nil && s.Receiver.Latency.Count > 0) {
					break
				}
				if time.Now().After(deadline) {
					b.Fatalf("no lateness or latency after 10 s: %+v", s)
				}
			}
			prev := run.Snapshot()
			b.ReportAllocs()
			for b.Loop() {
				s := run.Snapshot()
				_ = s.LatenessSince(prev)
				_ = s.ReceiverLatencySince(prev)
				prev = s
			}
		})
	}
}
