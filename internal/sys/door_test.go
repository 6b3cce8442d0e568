package sys_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/sys"
)

// TestOneDoorToTheKernel enforces that internal/sys alone imports
// golang.org/x/sys/unix and unsafe (STYLE.md: one door to the kernel).
func TestOneDoorToTheKernel(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "github.com/wpg-dev/wpg/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] == "github.com/wpg-dev/wpg/internal/sys" {
			continue
		}
		for _, imp := range f[1:] {
			if imp == "unsafe" || imp == "golang.org/x/sys/unix" {
				t.Errorf("%s imports %s: go through internal/sys instead", f[0], imp)
			}
		}
	}
}

// TestMonotonicNsIsClockMonotonic checks the vDSO read against the
// system call: the two must agree (they are the same clock).
func TestMonotonicNsIsClockMonotonic(t *testing.T) {
	a := sys.MonotonicNs()
	b := sys.MonotonicSyscallNs()
	c := sys.MonotonicNs()
	if b < a || b > c {
		t.Fatalf("CLOCK_MONOTONIC syscall %d not between vDSO reads %d and %d", b, a, c)
	}
}
