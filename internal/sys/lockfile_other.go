//go:build !linux

package sys

import (
	"errors"
	"os"
)

// ErrLocked is wrapped by LockFile's error when another process holds the
// lock.
var ErrLocked = errors.New("locked by another process")

// LockFile opens (creating) path; other systems take no lock.
func LockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
}
