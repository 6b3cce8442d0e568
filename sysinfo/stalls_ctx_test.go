package sysinfo

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/sys"
)

// TestProbeStallsContextStops: a stall probe ends when its context does,
// with what the CPU being probed saw so far and the context's error; a
// `wpg sysinfo --stalls 10h` ignored Ctrl-C and SIGTERM and spun a CPU
// for ten hours per CPU.
func TestProbeStallsContextStops(t *testing.T) {
	cpus, err := sys.AllowedCPUs()
	if err != nil || len(cpus) == 0 {
		t.Skip("allowed CPUs unknown")
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	done := make(chan struct{})
	var out []CPUStalls
	go func() {
		out, err = ProbeStallsContext(ctx, cpus[:1], time.Hour, 2*time.Microsecond)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute): // a bound for a broken probe, not a timing
		t.Fatal("the probe went on after its context was cancelled")
	}
	if !errors.Is(err, context.Canceled) || len(out) != 1 || out[0].CPU != cpus[0] || out[0].Seconds <= 0 || out[0].Seconds >= 3600 {
		t.Errorf("cancelled probe: %+v, %v; want one CPU's partial result and context.Canceled", out, err)
	}
	if out, err := ProbeStallsContext(ctx, cpus[:1], time.Hour, 2*time.Microsecond); !errors.Is(err, context.Canceled) || len(out) != 0 {
		t.Errorf("probe on a done context: %+v, %v; want nothing probed", out, err)
	}
}
