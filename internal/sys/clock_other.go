//go:build !linux

package sys

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

// SleepUntilMonotonic sleeps until the monotonic clock reaches ns. Outside
// Linux it uses the Go timer (no absolute clock_nanosleep).
func SleepUntilMonotonic(ns int64) error {
	if d := ns - nanotime(); d > 0 {
		time.Sleep(time.Duration(d))
	}
	return nil
}

// SleepUntilMonotonicRaw is SleepUntilMonotonic outside Linux.
func SleepUntilMonotonicRaw(ns int64) error { return SleepUntilMonotonic(ns) }

// SetThreadNormal does nothing outside Linux: threads never leave the
// normal scheduler there.
func SetThreadNormal() error { return nil }

// SetThreadFIFO is not supported outside Linux.
func SetThreadFIFO(prio int) error {
	return fmt.Errorf("SCHED_FIFO priority %d: %w on %s", prio, errors.ErrUnsupported, runtime.GOOS)
}
