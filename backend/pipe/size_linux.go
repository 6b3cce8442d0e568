//go:build linux

package pipe

import (
	"fmt"
	"os"

	"github.com/wpg-dev/wpg/internal/sys"
)

// Size enlarges the pipe fd to want bytes (pipe-max-size when want is 0)
// and returns the capacity and, when the kernel gave less, a warning that
// says why. It is the one sizing policy of every pipe wpg makes (this
// backend's both sides, membench's): an EPERM (the user's pipe pages are
// used up, or want is above pipe-max-size without CAP_SYS_RESOURCE) halves
// the request down to a page; any other refusal keeps the pipe's size.
func Size(fd, want int) (capacity int, warn string, err error) {
	if want <= 0 {
		max, err := sys.PipeMaxSize()
		if err != nil {
			max = 1 << 20
			warn = fmt.Sprintf("cannot read %s (%v); asking for 1 MiB", sys.PipeMaxSizePath, err)
		}
		want = max
	}
	got, err := sys.SetPipeSize(fd, want)
	for err != nil && want > pageSize {
		if !sys.IsPermission(err) {
			break
		}
		want /= 2
		got, err = sys.SetPipeSize(fd, want)
		warn = fmt.Sprintf("the kernel refused a larger pipe (EPERM: pipe-user-pages-soft in /proc/sys/fs exceeded, or above pipe-max-size without CAP_SYS_RESOURCE); using %d bytes", got)
	}
	if err != nil {
		cur, gerr := sys.PipeSize(fd)
		if gerr != nil {
			return 0, "", fmt.Errorf("size the pipe: %w", err)
		}
		return cur, fmt.Sprintf("cannot resize the pipe (%v); using its %d bytes", err, cur), nil
	}
	if got < want {
		warn = fmt.Sprintf("pipe is %d bytes, asked for %d", got, want)
	}
	return got, warn, nil
}

// NewSized returns a new pipe (read end, write end; close-on-exec,
// blocking) sized by Size to want bytes, its capacity, and Size's warning.
func NewSized(want int) (r, w *os.File, capacity int, warn string, err error) {
	rfd, wfd, err := sys.NewPipe()
	if err != nil {
		return nil, nil, 0, "", err
	}
	if capacity, warn, err = Size(wfd, want); err != nil {
		sys.CloseFd(rfd)
		sys.CloseFd(wfd)
		return nil, nil, 0, "", err
	}
	return os.NewFile(uintptr(rfd), "pipe-r"), os.NewFile(uintptr(wfd), "pipe-w"), capacity, warn, nil
}
