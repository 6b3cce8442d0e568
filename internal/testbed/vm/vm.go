// Package vm is wpg's kernel test bed: it boots a Linux kernel of the
// caller's choice under QEMU (software emulation, TCG) with an initramfs it
// writes itself (newc cpio, gzip), runs static programs in it (test
// binaries built with `go test -c`, the wpg binary), with the kernel
// modules asked for loaded, and reports each program's exit status and
// each Go test's result as read from the serial console, then powers the
// machine off.
//
// It serves tests that need a kernel feature the host lacks: the mainline
// /dev/udmabuf (CONFIG_UDMABUF), qdiscs such as etf and fq, kernel-version
// differences in AF_XDP. A test asks for "this binary under kernel X with
// these modules":
//
//	k, _ := vm.LoadKernel(cacheDir, "6.12.117+deb12-cloud-amd64")
//	res, err := vm.Machine{Kernel: k, QEMU: qemu, Init: initBin,
//		Modules: []string{"veth"},
//		Programs: []vm.Program{{Name: "e2e", Path: testBin, Args: []string{"-test.v", "-test.run", "^TestX$"}}},
//	}.Run(ctx)
//
// The guest's /init is the program in package vm/guest (build it static
// with CGO_ENABLED=0, as every program run in the guest must be): it
// mounts /proc, /sys, /dev (devtmpfs), /tmp, loads the modules
// (finit_module; the kernel decompresses .ko.xz), runs the programs in
// order with WPG_VM_GUEST=1 in their environment, and prints the lines
// Run parses ("WPGVM: …"). Kernels are the trees `dpkg -x` makes of a
// Debian linux-image package (boot/vmlinuz-REL, lib/modules/REL), kept in
// a directory the caller names (internal/testbed picks it from the
// environment; scripts/fetch-kernel.sh fills it).
//
// The package reads no environment variables and needs no privileges:
// qemu-system-x86_64 with TCG runs as any user.
package vm

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// GuestEnv is set to "1" in the environment of every program the guest
// runs, so that a test binary can tell it runs inside the test bed.
const GuestEnv = "WPG_VM_GUEST"

// ManifestPath is where the guest init reads its Manifest.
const ManifestPath = "/wpg-vm.json"

// Console line prefixes the guest init prints.
const (
	linePrefix = "WPGVM: "
	lineBegin  = "BEGIN "
	lineEnd    = "END "
	lineModule = "MODULE "
	lineDone   = "DONE"
	lineFail   = "FAIL "
)

// Manifest is what the guest init does, in order: load Modules (guest
// paths, dependencies first), then run Programs.
type Manifest struct {
	Modules  []ModuleLoad `json:"modules"`
	Programs []Program    `json:"programs"`
}

// ModuleLoad is one module the guest loads.
type ModuleLoad struct {
	Name   string `json:"name"`
	Path   string `json:"path"` // guest path of the .ko / .ko.xz
	Params string `json:"params,omitempty"`
}

// Program is a static executable the guest runs, its output going to the
// console.
type Program struct {
	// Name labels the program in the result ("" = the base name of Path).
	Name string `json:"name"`
	// Path is the host path of the executable; the guest runs it as
	// /bin/NAME.
	Path string `json:"-"`
	// Guest is its path in the guest (set by Run).
	Guest string   `json:"guest"`
	Args  []string `json:"args,omitempty"`
	// Env is added to the guest's environment (KEY=VALUE).
	Env []string `json:"env,omitempty"`
}

// File is an extra file copied into the guest.
type File struct {
	Host  string // host path
	Guest string // absolute guest path
	Mode  uint32 // 0 = 0o755
}

// Machine is one boot: the kernel, what goes into the initramfs, and how
// QEMU runs.
type Machine struct {
	Kernel *Kernel
	// QEMU is the qemu-system-x86_64 executable.
	QEMU string
	// Init is the guest init (package vm/guest, built static).
	Init string
	// Modules are module names to load (dependencies are added).
	Modules []string
	// Programs run in order.
	Programs []Program
	// Files are extra files for the guest.
	Files []File
	// Cmdline is added to the kernel command line (e.g.
	// "udmabuf.size_limit_mb=128").
	Cmdline []string
	// CPUs (0 = 2) and MemoryMiB (0 = 512) size the guest.
	CPUs, MemoryMiB int
	// CPU is QEMU's -cpu model ("" = QEMU's default, qemu64).
	CPU string
	// Timeout bounds the boot (0 = 120 s); QEMU is killed after it.
	Timeout time.Duration
	// Console, when not nil, receives the console output as it comes.
	Console io.Writer
}

// Initramfs builds the gzip-compressed newc archive for m: /init, the
// manifest, the programs under /bin, the extra files, the modules with
// their dependencies, and /dev/console.
func (m Machine) Initramfs() ([]byte, *Manifest, error) {
	if m.Kernel == nil || m.Init == "" {
		return nil, nil, errors.New("vm: Machine needs a Kernel and an Init")
	}
	var entries []Entry
	add := func(host, guest string, mode uint32) error {
		b, err := os.ReadFile(host)
		if err != nil {
			return fmt.Errorf("vm: %w", err)
		}
		entries = append(entries, Entry{Path: guest, Mode: mode, Data: b})
		return nil
	}
	if err := add(m.Init, "/init", 0o755); err != nil {
		return nil, nil, err
	}
	man := &Manifest{}
	names := map[string]bool{}
	for _, p := range m.Programs {
		if p.Name == "" {
			p.Name = filepath.Base(p.Path)
		}
		if names[p.Name] || strings.ContainsAny(p.Name, "/ \n") {
			return nil, nil, fmt.Errorf("vm: program name %q: give each program a distinct name without / or spaces", p.Name)
		}
		names[p.Name] = true
		p.Guest = "/bin/" + p.Name
		if err := add(p.Path, p.Guest, 0o755); err != nil {
			return nil, nil, err
		}
		man.Programs = append(man.Programs, p)
	}
	for _, f := range m.Files {
		mode := f.Mode
		if mode == 0 {
			mode = 0o755
		}
		if err := add(f.Host, f.Guest, mode); err != nil {
			return nil, nil, err
		}
	}
	mods, err := m.Kernel.ModuleDeps(m.Modules)
	if err != nil {
		return nil, nil, err
	}
	for _, rel := range mods {
		guest := path.Join("/lib/modules", m.Kernel.Release, rel)
		if err := add(filepath.Join(m.Kernel.Modules, rel), guest, 0o644); err != nil {
			return nil, nil, err
		}
		man.Modules = append(man.Modules, ModuleLoad{Name: moduleName(rel), Path: guest})
	}
	img, err := archive(entries, man)
	if err != nil {
		return nil, nil, err
	}
	return img, man, nil
}

// archive is the gzip-compressed newc archive of entries with the
// manifest man at ManifestPath, /dev/console and the mount points the
// init uses.
func archive(entries []Entry, man *Manifest) ([]byte, error) {
	mj, err := json.Marshal(man)
	if err != nil {
		return nil, err
	}
	entries = append(entries,
		Entry{Path: ManifestPath, Mode: 0o644, Data: mj},
		Entry{Path: "/dev/console", Mode: 0o600, Chr: true, Major: 5, Minor: 1},
		Entry{Path: "/proc", Dir: true, Mode: 0o555},
		Entry{Path: "/sys", Dir: true, Mode: 0o555},
		Entry{Path: "/tmp", Dir: true, Mode: 0o1777},
		Entry{Path: "/run", Dir: true, Mode: 0o755},
	)
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err := WriteCPIO(zw, entries); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Args are QEMU's arguments for booting m with the initramfs at initrd.
func (m Machine) Args(initrd string) []string {
	cpus, mem := m.CPUs, m.MemoryMiB
	if cpus <= 0 {
		cpus = 2
	}
	if mem <= 0 {
		mem = 512
	}
	cmdline := append([]string{"console=ttyS0", "quiet", "panic=-1", "oops=panic"}, m.Cmdline...)
	args := []string{
		"-accel", "tcg", "-m", strconv.Itoa(mem) + "M", "-smp", strconv.Itoa(cpus),
		"-nographic", "-no-reboot", "-nic", "none",
		"-kernel", m.Kernel.Image, "-initrd", initrd,
		"-append", strings.Join(cmdline, " "),
	}
	if m.CPU != "" {
		args = append(args, "-cpu", m.CPU)
	}
	return args
}

// Run boots the machine, waits for the guest to power off (or for the
// timeout, or ctx), and parses the console. The error is about the boot
// itself (QEMU missing, the guest hung, no DONE line); a program that
// failed is in its ProgramResult. A guest kernel that panics before the
// init's first line is booted again, at most maxEarlyDeaths times
// (Result.EarlyDeaths keeps their consoles).
func (m Machine) Run(ctx context.Context) (*Result, error) {
	img, man, err := m.Initramfs()
	if err != nil {
		return nil, err
	}
	var early []string
	for {
		res, err := m.boot(ctx, img, man)
		if res != nil && diedEarly(res, err) && len(early) < maxEarlyDeaths && ctx.Err() == nil {
			early = append(early, tail(res.Console, 3000))
			continue
		}
		if res != nil {
			res.EarlyDeaths = early
		}
		return res, err
	}
}

// maxEarlyDeaths is how many boots Run gives up on before the init's
// first line and boots again; a kernel that dies that early every time
// fails the run.
const maxEarlyDeaths = 2

// diedEarly reports whether a boot failed because the guest kernel
// stopped (QEMU exited by itself: -no-reboot after a panic) before the
// init printed its first line: nothing of the machine's programs ran.
func diedEarly(res *Result, err error) bool {
	return err != nil && !res.Done && !strings.Contains(res.Console, linePrefix) &&
		strings.Contains(res.Console, "Kernel panic")
}

// boot runs QEMU once with the initramfs img (manifest man).
func (m Machine) boot(ctx context.Context, img []byte, man *Manifest) (*Result, error) {
	dir, err := os.MkdirTemp("", "wpg-vm-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	initrd := filepath.Join(dir, "initrd.cpio.gz")
	if err := os.WriteFile(initrd, img, 0o644); err != nil {
		return nil, err
	}
	timeout := m.Timeout
	if timeout <= 0 {
		timeout = 120 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	qemu := m.QEMU
	if qemu == "" {
		qemu = "qemu-system-x86_64"
	}
	cmd := exec.CommandContext(ctx, qemu, m.Args(initrd)...)
	var console bytes.Buffer
	var out io.Writer = &console
	if m.Console != nil {
		out = io.MultiWriter(&console, m.Console)
	}
	cmd.Stdout, cmd.Stderr, cmd.Stdin = out, out, nil
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	runErr := cmd.Run()
	res := Parse(console.String())
	res.Wall = time.Since(start)
	for i, p := range man.Programs {
		if i < len(res.Programs) {
			continue
		}
		res.Programs = append(res.Programs, ProgramResult{Name: p.Name})
	}
	switch {
	case ctx.Err() != nil:
		return res, fmt.Errorf("vm: the guest did not power off within %v (%v); console tail:\n%s", timeout, ctx.Err(), tail(res.Console, 3000))
	case runErr != nil:
		return res, fmt.Errorf("vm: %s: %w; console tail:\n%s", qemu, runErr, tail(res.Console, 3000))
	case !res.Done:
		return res, fmt.Errorf("vm: the guest stopped before its init finished (kernel panic, init crash?); console tail:\n%s", tail(res.Console, 3000))
	}
	return res, nil
}
