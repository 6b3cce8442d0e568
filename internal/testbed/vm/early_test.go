package vm_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/testbed/vm"
)

// fakeQEMU writes a script that stands in for QEMU: the boots it prints
// are given in order (one per run), the last one again once they run out.
func fakeQEMU(t *testing.T, boots ...string) string {
	t.Helper()
	dir := t.TempDir()
	var sh strings.Builder
	sh.WriteString("#!/bin/sh\nn=$(cat " + dir + "/n 2>/dev/null || echo 0)\necho $((n+1)) > " + dir + "/n\ncase $n in\n")
	for i, b := range boots {
		pat := "*"
		if i < len(boots)-1 {
			pat = string(rune('0' + i))
		}
		sh.WriteString(pat + ") printf '%s\\n' '" + b + "';;\n")
	}
	sh.WriteString("esac\n")
	path := filepath.Join(dir, "qemu")
	if err := os.WriteFile(path, []byte(sh.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func fakeMachine(t *testing.T, qemu string) vm.Machine {
	dir := t.TempDir()
	init := filepath.Join(dir, "init")
	if err := os.WriteFile(init, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return vm.Machine{Kernel: &vm.Kernel{Image: "/nonexistent"}, QEMU: qemu, Init: init, Timeout: 20 * time.Second}
}

const (
	earlyPanic = "[    3.75] RIP: 0010:sched_clock_tick+0x5/0xb0\n[    3.75] Kernel panic - not syncing: Fatal exception in interrupt"
	goodBoot   = "[    0.1] Linux version 6.12\nWPGVM: DONE"
)

// TestRunBootsAgainAfterAnEarlyKernelDeath: a guest kernel that panics
// before the init's first line (TCG on a loaded host) is booted again, and
// the result keeps the dead boot's console.
func TestRunBootsAgainAfterAnEarlyKernelDeath(t *testing.T) {
	m := fakeMachine(t, fakeQEMU(t, earlyPanic, goodBoot))
	res, err := m.Run(context.Background())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !res.Done || len(res.EarlyDeaths) != 1 || !strings.Contains(res.EarlyDeaths[0], "Kernel panic") {
		t.Errorf("done %v, early deaths %q", res.Done, res.EarlyDeaths)
	}
}

// TestRunGivesUpOnAKernelThatAlwaysDiesEarly: after maxEarlyDeaths boots
// again the run fails, and a panic after the init began is never retried.
func TestRunGivesUpOnAKernelThatAlwaysDiesEarly(t *testing.T) {
	m := fakeMachine(t, fakeQEMU(t, earlyPanic))
	res, err := m.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "before its init finished") || len(res.EarlyDeaths) != 2 {
		t.Errorf("err %v, early deaths %d; want a failure after 2", err, len(res.EarlyDeaths))
	}
	late := "WPGVM: BEGIN e2e\n" + earlyPanic
	m = fakeMachine(t, fakeQEMU(t, late, goodBoot))
	res, err = m.Run(context.Background())
	if err == nil || len(res.EarlyDeaths) != 0 {
		t.Errorf("a panic after the init began: err %v, early deaths %d; want a failure without a retry", err, len(res.EarlyDeaths))
	}
}
