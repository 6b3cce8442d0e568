package peer

import (
	"errors"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/sys"
)

// NextOrWait returns the frames already buffered, like Next. When there
// are none (the read function returned empty), it retries while yielding
// the CPU for up to spin — the writer is usually mid-write, and an idle
// vCPU is slow to wake — then waits up to timeout in poll(2) for fd to
// become readable and reads once more. It returns 0 frames and no error
// when nothing arrived in time; a poll error is an error of backend name
// about at (backend.ErrorfAt: "pipe (fifo x): …").
func (s *StreamReader) NextOrWait(views [][]byte, fd int, timeout, spin time.Duration, empty error, name, at string) (int, error) {
	n, err := s.Next(views)
	if !errors.Is(err, empty) {
		return n, err
	}
	for start := sys.MonotonicNs(); sys.MonotonicNs()-start < int64(min(spin, timeout)); {
		sys.Yield()
		if n, err = s.Next(views); !errors.Is(err, empty) {
			return n, err
		}
	}
	ready, err := sys.PollIn(fd, timeout)
	if err != nil {
		return 0, backend.ErrorfAt(name, at, "%w", err)
	}
	if !ready {
		return 0, nil
	}
	n, err = s.Next(views)
	if errors.Is(err, empty) {
		return 0, nil
	}
	return n, err
}
