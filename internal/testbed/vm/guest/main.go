//go:build linux

// Command guest is the /init of the kernel test bed (package vm): it
// mounts the pseudo file systems, loads the manifest's modules, runs its
// programs with their output on the console, prints the lines vm.Parse
// reads, and powers the machine off. Build it static (CGO_ENABLED=0).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/internal/testbed/vm"
)

func main() {
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "guest: this is the test bed's /init; it runs as pid 1 inside the VM only")
		os.Exit(2)
	}
	if err := run(); err != nil {
		say("FAIL %v", err)
	}
	say("DONE")
	if err := sys.PowerOff(); err != nil {
		say("FAIL power off: %v", err)
	}
	for {
		time.Sleep(time.Hour) // pid 1 must not exit (the kernel would panic)
	}
}

func say(format string, args ...any) {
	fmt.Fprintf(os.Stdout, "\nWPGVM: "+format+"\n", args...)
}

func run() error {
	for _, m := range []struct{ src, dst, fs string }{
		{"proc", "/proc", "proc"},
		{"sysfs", "/sys", "sysfs"},
		{"devtmpfs", "/dev", "devtmpfs"},
		{"tmpfs", "/tmp", "tmpfs"},
		{"tmpfs", "/run", "tmpfs"},
	} {
		if err := sys.Mount(m.src, m.dst, m.fs, 0, ""); err != nil {
			return err
		}
	}
	os.MkdirAll("/dev/shm", 0o1777)
	if err := sys.Mount("tmpfs", "/dev/shm", "tmpfs", 0, ""); err != nil {
		return err
	}
	b, err := os.ReadFile(vm.ManifestPath)
	if err != nil {
		return err
	}
	var man vm.Manifest
	if err := json.Unmarshal(b, &man); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	for _, m := range man.Modules {
		if err := load(m); err != nil {
			return fmt.Errorf("module %s: %w", m.Name, err)
		}
		say("MODULE %s", m.Name)
	}
	env := []string{"PATH=/bin", "HOME=/tmp", "TMPDIR=/tmp", vm.GuestEnv + "=1"}
	for _, p := range man.Programs {
		say("BEGIN %s", p.Name)
		cmd := exec.Command(p.Guest, p.Args...)
		cmd.Env = append(append([]string(nil), env...), p.Env...)
		cmd.Dir = "/tmp"
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stdout
		err := cmd.Run()
		code := 0
		if err != nil {
			code = -1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else {
				fmt.Fprintf(os.Stdout, "guest: run %s: %v\n", p.Guest, err)
			}
		}
		say("END %s rc=%d", p.Name, code)
	}
	return nil
}

func load(m vm.ModuleLoad) error {
	f, err := os.Open(m.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	compressed := strings.HasSuffix(m.Path, ".xz") || strings.HasSuffix(m.Path, ".zst") || strings.HasSuffix(m.Path, ".gz")
	err = sys.LoadModule(int(f.Fd()), m.Params, compressed)
	if errors.Is(err, syscall.EEXIST) {
		return nil // loaded already (a dependency of an earlier one)
	}
	return err
}
