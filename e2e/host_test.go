package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// wpg sysinfo says which backends this build has and which in-place
// readers this CPU runs, now that help text lists every one wpg knows
// (issue #17 item 1). GODEBUG turns AVX-512 off, as on a CPU without it.
func TestSysinfoListsBuildAndReaders(t *testing.T) {
	cmd := exec.Command(testbed.Wpg(t), "sysinfo", "--json")
	cmd.Env = append(os.Environ(), "GODEBUG=cpu.avx512f=off")
	out, errs, code := runCmd(t, cmd)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var e struct {
		Build struct {
			Backends        []string `json:"backends"`
			MissingBackends []string `json:"backends_not_in_build"`
			Readers         []string `json:"readers"`
			MissingReaders  []string `json:"readers_not_on_cpu"`
		} `json:"build"`
	}
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatal(err)
	}
	b := e.Build
	if !slices.Contains(b.Backends, "null") || !slices.Contains(b.MissingBackends, "dpdk") || !slices.Contains(b.Readers, "go") || slices.Contains(b.Readers, "avx512") {
		t.Errorf("sysinfo build: %+v", b)
	}
	if len(b.MissingReaders) == 0 || !strings.HasPrefix(b.MissingReaders[0], "avx512 (needs AVX-512F") {
		t.Errorf("readers not on this CPU: %v", b.MissingReaders)
	}
	// Asking for a backend this build lacks says which build tag adds it.
	_, errs, code = run(t, t.TempDir(), "send", "--backend", "dpdk", "--count", "1")
	if code != 2 || !strings.Contains(errs, "-tags dpdk") {
		t.Errorf("--backend dpdk: exit %d, %q", code, errs)
	}
}
