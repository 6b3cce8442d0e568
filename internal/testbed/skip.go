// Package testbed holds test helpers: earned skips that fail under CI=true,
// network namespaces with veth pairs created and removed by the test, and a
// way to build and run the wpg binary from tests.
package testbed

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// InCI reports whether the tests run under CI (CI=true), where a missing
// privilege, tool or kernel feature is a failure rather than a skip.
func InCI() bool { return os.Getenv("CI") == "true" }

// Skip skips the test with an actionable reason; under CI=true it fails it
// instead, so nothing silently stops being tested.
func Skip(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("CI=true: cannot skip: %s", msg)
	}
	t.Skip(msg)
}

// RequireRoot skips (or fails under CI) unless the test runs as root.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		Skip(t, "needs root (CAP_NET_ADMIN, CAP_NET_RAW): run the tests as root")
	}
}

// RequireTool skips (or fails under CI) unless name is on PATH, and
// returns its path.
func RequireTool(t testing.TB, name, debPackage string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Skip(t, "needs %s: apt-get install %s", name, debPackage)
	}
	return p
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// Wpg builds the wpg binary once per test process and returns its path.
func Wpg(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		dir, err := os.MkdirTemp("", "wpg-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "wpg")
		cmd := exec.Command("go", "build", "-o", buildPath, "./cmd/wpg")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./cmd/wpg: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// RemoveBuilds deletes the binaries that Wpg and WpgShared built for this
// test process; a package's TestMain calls it after m.Run, so no
// /tmp/wpg-bin-* or /tmp/wpg-shared-* directory outlives the tests.
func RemoveBuilds() {
	if buildPath != "" {
		os.RemoveAll(filepath.Dir(buildPath))
	}
	if sharedPath != "" {
		os.RemoveAll(filepath.Dir(sharedPath))
	}
	if staticDir != "" {
		os.RemoveAll(staticDir)
	}
}
