//go:build linux

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/internal/testbed"
)

// TestLargeFramesUnderAddressSpaceLimit: 1 GiB frames on the paths that
// need two of them in memory (memcpy's source and destination, cma's and
// shm's two slots) under a 2.5 GiB address-space limit (prlimit --as) fail
// with a clear error that says how to fix it, never with the runtime's
// fatal "out of memory" (issue #17 item 24). The limit leaves room for
// what a Go process reserves up front (~1.5 GiB of address space, glibc's
// per-thread arenas capped with MALLOC_ARENA_MAX), so that only the frame
// buffers can fail.
func TestLargeFramesUnderAddressSpaceLimit(t *testing.T) {
	prlimit := testbed.RequireTool(t, "prlimit", "util-linux")
	wpg := testbed.Wpg(t)
	for _, b := range []string{"memcpy", "cma", "shm"} {
		t.Run(b, func(t *testing.T) {
			cmd := exec.Command(prlimit, "--as="+strconv.Itoa(2560<<20), wpg, "send", "--backend", b, "--size", "1GiB", "--count", "2")
			cmd.Env = append(os.Environ(), "MALLOC_ARENA_MAX=1")
			out, errs, code := runCmd(t, cmd)
			if code != 1 || strings.Contains(errs, "fatal error") || !strings.Contains(errs, "cannot allocate") || !strings.Contains(errs, "ulimit -v") {
				t.Fatalf("exit %d (want 1), stdout %q\nstderr: %s", code, out, firstLines(errs, 5))
			}
		})
	}
}

// TestPipeKillLeavesStdoutBlocking: a pipe sender killed with SIGKILL
// cannot restore anything, so it must never have changed the flags of the
// pipe it shares with the rest of the pipeline: after it dies the write
// end is still blocking (issue #17 item 27). Same for a receiver on stdin.
func TestPipeKillLeavesStdoutBlocking(t *testing.T) {
	wpg := testbed.Wpg(t)
	for _, side := range []string{"send", "recv"} {
		t.Run(side, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close()
			var cmd *exec.Cmd
			var shared *os.File
			if side == "send" {
				cmd = exec.Command(wpg, "send", "--backend", "pipe", "--size", "4096", "--rate", "1kfps")
				cmd.Stdout, shared = w, w
			} else {
				cmd = exec.Command(wpg, "recv", "--backend", "pipe")
				cmd.Stdin, shared = r, r
			}
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The child has the pipe; os/exec made the description blocking.
			if nb, err := nonblocking(shared); err != nil || nb {
				t.Fatalf("before: nonblocking %v, %v", nb, err)
			}
			if side == "send" {
				// Wait until frames flow.
				buf := make([]byte, 4096)
				deadline := time.Now().Add(20 * time.Second)
				for got := 0; got < 8192; {
					n, err := r.Read(buf)
					if err != nil || time.Now().After(deadline) {
						t.Fatalf("read %d bytes: %v\nstderr: %s", got, err, errb.String())
					}
					got += n
				}
			} else {
				time.Sleep(500 * time.Millisecond) // the receiver opens stdin and waits
			}
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			if nb, err := nonblocking(shared); err != nil || nb {
				t.Fatalf("after SIGKILL: O_NONBLOCK set on the shared pipe (%v); stderr: %s", err, errb.String())
			}
		})
	}
}

// nonblocking reads O_NONBLOCK of f's file description (f.Fd would
// clear it).
func nonblocking(f *os.File) (nb bool, err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	if cerr := rc.Control(func(fd uintptr) { nb, err = sys.Nonblocking(int(fd)) }); cerr != nil {
		return false, cerr
	}
	return nb, err
}

// TestKilledSenderLeavesNoTempDir: SIGKILL of a sender with its own
// receiver leaves nothing under the temporary directory: the rendezvous
// is an abstract-namespace socket (issue #17 item 28).
func TestKilledSenderLeavesNoTempDir(t *testing.T) {
	wpg := testbed.Wpg(t)
	tmp := t.TempDir()
	for _, b := range []string{"shm", "cma", "unix"} {
		t.Run(b, func(t *testing.T) {
			cmd := exec.Command(wpg, "send", "--backend", b, "--size", "4096", "--rate", "1kfps")
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(1500 * time.Millisecond) // the receiver child has met the sender
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			time.Sleep(300 * time.Millisecond) // the child dies with its parent (PDEATHSIG)
			left, _ := filepath.Glob(filepath.Join(tmp, "wpg-*"))
			if len(left) > 0 {
				t.Fatalf("left behind: %v\nstderr: %s", left, errb.String())
			}
		})
	}
}
