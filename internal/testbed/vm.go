package testbed

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed/vm"
)

// KernelRelease is the kernel the VM tests boot: Debian bookworm's 6.12
// cloud kernel (CONFIG_UDMABUF=y, DMA-buf heaps, etf/fq as modules).
const KernelRelease = "6.12.117+deb12-cloud-amd64"

// KernelCache is the directory of unpacked kernels: $WPG_KERNEL_CACHE,
// else $XDG_CACHE_HOME/wpg-kernels, else ~/.cache/wpg-kernels (where
// scripts/fetch-kernel.sh puts them).
func KernelCache() string {
	if d := os.Getenv("WPG_KERNEL_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "wpg-kernels")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "wpg-kernels")
}

// Kernel returns kernel release from the cache (see KernelCache); when it
// is not there it skips (fails under CI=true) saying how to fetch it.
func Kernel(t testing.TB, release string) *vm.Kernel {
	t.Helper()
	k, err := vm.LoadKernel(filepath.Join(KernelCache(), release), release)
	if err != nil {
		Skip(t, "needs kernel %s for the VM test bed: %v: run scripts/fetch-kernel.sh %s", release, err, release)
	}
	return k
}

// QEMU returns the qemu-system-x86_64 executable, or skips (fails under
// CI=true).
func QEMU(t testing.TB) string {
	t.Helper()
	return RequireTool(t, "qemu-system-x86_64", "qemu-system-x86")
}

var (
	staticMu    sync.Mutex
	staticBuilt = map[string]string{}
	staticDir   string
)

// BuildStatic builds the package pkg (a path relative to the module root,
// e.g. ./cmd/wpg) as a static binary (CGO_ENABLED=0) once per test
// process; test builds its test binary (go test -c) instead. The
// binaries are removed by RemoveBuilds.
func BuildStatic(t testing.TB, pkg string, test bool) string {
	t.Helper()
	staticMu.Lock()
	defer staticMu.Unlock()
	key := fmt.Sprint(pkg, test)
	if p, ok := staticBuilt[key]; ok {
		return p
	}
	if staticDir == "" {
		d, err := os.MkdirTemp("", "wpg-static-")
		if err != nil {
			t.Fatal(err)
		}
		staticDir = d
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	out := filepath.Join(staticDir, fmt.Sprintf("bin%d", len(staticBuilt)))
	args := []string{"build", "-o", out, pkg}
	if test {
		args = []string{"test", "-c", "-o", out, pkg}
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go %v: %v\n%s", args, err, b)
	}
	staticBuilt[key] = out
	return out
}

// GuestInit builds the test bed's guest init (package vm/guest).
func GuestInit(t testing.TB) string {
	t.Helper()
	return BuildStatic(t, "./internal/testbed/vm/guest", false)
}

// InGuest reports whether the test runs inside the VM test bed.
func InGuest() bool { return os.Getenv(vm.GuestEnv) == "1" }
