package e2e

import (
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// Ctrl-C on a terminal signals the whole foreground process group. The
// receiver child of a local bench used to be in that group, died with the
// sender and turned the stopped run into "the receiver has gone" (exit 1).
// It lives in a group of its own now: the bench stops in order, exits 0 and
// prints the receiver's verification.
func TestCtrlCOfLocalBenchStopsInOrder(t *testing.T) {
	for _, b := range []string{"shm", "pipe", "unix", "cma"} {
		t.Run(b, func(t *testing.T) {
			cmd := exec.Command(testbed.Wpg(t), "bench", "--backend", b, "--size", "64KiB", "--duration", "20s")
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a group, as a shell makes for a job
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(1500 * time.Millisecond)
			if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil { // what the terminal does
				t.Fatal(err)
			}
			err := cmd.Wait()
			if err != nil {
				t.Fatalf("%v after Ctrl-C of the group: %s%s", err, out.String(), errb.String())
			}
			rep := out.String()
			if !strings.Contains(rep, "stop") || !strings.Contains(rep, "signal") || !strings.Contains(rep, "0 lost") {
				t.Fatalf("report lacks the signal stop or the receiver's verification:\n%s%s", rep, errb.String())
			}
		})
	}
}
