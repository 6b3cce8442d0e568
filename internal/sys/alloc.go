package sys

import (
	"fmt"

	"github.com/wpg-dev/wpg/units"
)

// AllocError is the error of a large buffer the system would not give
// (the address-space limit, ulimit -v, or memory itself): it names the
// size and the purpose, says how to get past it, and unwraps to the system
// error (ENOMEM). Large buffers are allocated with Alloc rather than make,
// whose failure is a fatal "out of memory" that no caller can report.
type AllocError struct {
	Bytes int64
	What  string // what the buffer is for, e.g. "pipe receiver buffer"
	Err   error
}

// Error says what could not be allocated and how to fix it.
func (e *AllocError) Error() string {
	return fmt.Sprintf("cannot allocate %d bytes (%s) for %s: %v: lower --size (or --slots) or raise the limit (ulimit -v, or the memory cgroup's memory.max)",
		e.Bytes, sizeString(e.Bytes), e.What, e.Err)
}

// Unwrap returns the system error.
func (e *AllocError) Unwrap() error { return e.Err }

// sizeString formats n bytes in binary units (1.0 GiB).
func sizeString(n int64) string { return units.FormatSizeApprox(n) }
