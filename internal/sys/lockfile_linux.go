//go:build linux

package sys

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrLocked is wrapped by LockFile's error when another process holds the
// lock.
var ErrLocked = errors.New("locked by another process")

// LockFile takes an exclusive advisory lock (flock) on path, creating it,
// and writes this process's pid into it. It does not wait: when another
// process holds the lock the error wraps ErrLocked and names that
// process's pid as its file says. The lock lasts until the returned file
// is closed (or the process exits, however it ends).
func LockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b[:n]))); perr == nil {
				return nil, fmt.Errorf("%s: %w (pid %d)", path, ErrLocked, pid)
			}
			return nil, fmt.Errorf("%s: %w", path, ErrLocked)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}
