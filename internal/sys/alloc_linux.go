//go:build linux

package sys

import (
	"errors"

	"golang.org/x/sys/unix"
)

// Alloc maps size bytes of private anonymous memory for what, faulted in
// and written once (MapAnon); Close releases it. When the system refuses
// (ENOMEM: over ulimit -v, or out of memory) the error is an *AllocError
// naming size and what, instead of the runtime's fatal "out of memory" a
// make of the same size ends in.
func Alloc(size int, what string) (*SharedMapping, error) {
	if size <= 0 {
		return nil, &AllocError{Bytes: int64(size), What: what, Err: unix.EINVAL}
	}
	m, err := MapAnon(size)
	if err != nil {
		var errno unix.Errno
		if !errors.As(err, &errno) {
			errno = unix.ENOMEM
		}
		return nil, &AllocError{Bytes: int64(size), What: what, Err: errno}
	}
	return m, nil
}
