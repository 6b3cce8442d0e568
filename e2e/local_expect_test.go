package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/syncbuf"
	"github.com/wpg-dev/wpg/internal/testbed"
)

// An independent receiver that stops at --expect N after the sender's
// --count N frames has consumed every one of them: the sender ends with
// "count", not with "the receiver has gone" (shm's receiver closed with
// its last batch still held, and the sender counted it as lost).
func TestConnectExpectEqualsCount(t *testing.T) {
	for _, b := range []string{"shm", "cma", "unix"} {
		t.Run(b, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "r.sock")
			rcv := exec.Command(testbed.Wpg(t), "recv", "--backend", b, "--listen", sock, "--expect", "10000")
			var rout syncbuf.Buffer
			rcv.Stdout, rcv.Stderr = &rout, &rout
			if err := rcv.Start(); err != nil {
				t.Fatal(err)
			}
			defer rcv.Process.Kill()
			waitForSocket(t, sock)
			out, stderr, code := run(t, t.TempDir(), "send", "--backend", b, "--connect", sock, "--count", "10000", "--size", "4KiB")
			if code != 0 || !strings.Contains(out, "count") || strings.Contains(out+stderr, "gone") {
				t.Fatalf("send exit %d:\n%s\n%s", code, out, stderr)
			}
			if err := rcv.Wait(); err != nil {
				t.Fatalf("recv: %v\n%s", err, rout.String())
			}
		})
	}
}

// waitForSocket waits (up to 10 s) for a receiver's rendezvous socket.
func waitForSocket(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no socket at %s after 10 s", path)
}

// A FIFO given as --payload-file or --config is refused at once, not
// waited on forever (the open of a FIFO blocks until a writer comes).
func TestFIFOInputsRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "ff")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"send", "--backend", "memcpy", "--payload-file", fifo, "--count", "1"},
		{"--config", fifo, "send", "--backend", "null", "--count", "1"},
	} {
		done := make(chan struct{})
		var code int
		var stderr string
		go func() {
			_, stderr, code = run(t, dir, args...)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%v still running after 20 s (waiting on the FIFO)", args)
		}
		if code == 0 || !strings.Contains(stderr, fifo) {
			t.Errorf("%v: exit %d, %q; want an error naming the FIFO", args, code, stderr)
		}
	}
}
