//go:build pcap || dpdk

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/testbed"
)

var (
	taggedMu   sync.Mutex
	taggedBins = map[string]string{}
)

// wpgTagged builds wpg with cgo and the build tags (e.g. "pcap,dpdk")
// into a temporary directory of the test that asks first; tests after it
// build again (from the build cache: a link) once that directory is
// gone. It skips (fails under CI=true) without a C compiler or pkg-config.
func wpgTagged(t *testing.T, tags string) string {
	t.Helper()
	testbed.RequireTool(t, "gcc", "gcc")
	testbed.RequireTool(t, "pkg-config", "pkg-config")
	taggedMu.Lock()
	defer taggedMu.Unlock()
	if bin, ok := taggedBins[tags]; ok {
		if _, err := os.Stat(bin); err == nil {
			return bin
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "wpg")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", tags, "-o", bin, "./cmd/wpg")
	_, file, _, _ := runtime.Caller(0)
	cmd.Dir = filepath.Join(filepath.Dir(file), "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=1 go build -tags %s ./cmd/wpg: %v\n%s", tags, err, out)
	}
	taggedBins[tags] = bin
	return bin
}
