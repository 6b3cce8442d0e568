package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// `wpg send --backend pipe --raw` with standard output on a file, not a
// pipe, used to start wpg's own receiver, which cannot read headerless
// frames: the run failed with EPIPE after one frame and a report claiming
// lost frames. It is a usage error that says what to do.
func TestPipeRawWithoutAPipeIsAUsageError(t *testing.T) {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	cmd := exec.Command(testbed.Wpg(t), "send", "--backend", "pipe", "--raw", "--size", "4096", "--count", "3")
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = devnull, &errb
	err = cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 2 {
		t.Fatalf("err %v, want exit 2: %s", err, errb.String())
	}
	if msg := errb.String(); !strings.Contains(msg, "not a pipe") || !strings.Contains(msg, "--fifo") {
		t.Fatalf("message %q lacks the reason and the fix", msg)
	}
	// Into a pipe it still works.
	out, errs, code := run(t, t.TempDir(), "send", "--backend", "pipe", "--raw", "--size", "4096", "--count", "3")
	if code != 0 || len(out) != 3*4096 {
		t.Fatalf("exit %d, %d bytes on stdout, want 12288: %s", code, len(out), errs)
	}
}

// The same holds on every local path whose sender starts its own receiver
// without --connect: `wpg send --backend shm --raw` used to run, and end in
// "verification failed: 3 of 3 sent frames never arrived".
func TestRawWithOwnReceiverIsAUsageError(t *testing.T) {
	for _, b := range []string{"shm", "unix", "cma"} {
		_, errs, code := run(t, t.TempDir(), "send", "--backend", b, "--raw", "--size", "4096", "--count", "3")
		if code != 2 || !strings.Contains(errs, "own receiver") || !strings.Contains(errs, "--raw") {
			t.Errorf("%s: exit %d, want 2 naming --raw and the receiver: %s", b, code, errs)
		}
	}
}
