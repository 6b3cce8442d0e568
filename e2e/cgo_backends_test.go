package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The cgo backends (pcap, dpdk; issue #16) come in only with their build
// tags. These tests, in every build, check that the default build stays
// pure Go; the tagged tests (cgo_pcap_test.go, cgo_dpdk_test.go) run with
// `go test -tags pcap,dpdk` and build a tagged wpg with wpgTagged (cgo_build_test.go).

// TestDefaultBuildHasNoCgo: with CGO_ENABLED=0 the default wpg builds and
// none of its packages is runtime/cgo or a cgo backend; without the tags
// (cgo on or off) the backends are left out, and asking for one says how
// to get it.
func TestDefaultBuildHasNoCgo(t *testing.T) {
	root := repoFile(t, ".")
	env := append(os.Environ(), "CGO_ENABLED=0")
	list := exec.Command("go", "list", "-deps", "./cmd/wpg")
	list.Dir, list.Env = root, env
	out, err := list.CombinedOutput()
	if err != nil {
		t.Fatalf("CGO_ENABLED=0 go list -deps ./cmd/wpg: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "runtime/cgo" || under(pkg, "github.com/wpg-dev/wpg/backend/dpdk") || under(pkg, "github.com/wpg-dev/wpg/backend/pcap") {
			t.Errorf("the default build depends on %s", pkg)
		}
	}
	// With cgo on but no tags, the cgo backends are still left out.
	list = exec.Command("go", "list", "-deps", "./cmd/wpg")
	list.Dir, list.Env = root, append(os.Environ(), "CGO_ENABLED=1")
	if out, err = list.CombinedOutput(); err != nil {
		t.Fatalf("go list -deps ./cmd/wpg: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasSuffix(pkg, "/internal/rte") || strings.HasSuffix(pkg, "/internal/libpcap") {
			t.Errorf("the untagged build depends on %s", pkg)
		}
	}
	bin := filepath.Join(t.TempDir(), "wpg")
	build := exec.Command("go", "build", "-o", bin, "./cmd/wpg")
	build.Dir, build.Env = root, env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build ./cmd/wpg: %v\n%s", err, out)
	}
	for _, c := range []struct{ name, tag, dev string }{{"pcap", "-tags pcap", "libpcap-dev"}, {"dpdk", "-tags dpdk", "libdpdk-dev"}} {
		cmd := exec.Command(bin, "send", "--backend", c.name, "-i", "lo", "--count", "1")
		cmd.Dir = t.TempDir()
		_, errs, code := runCmd(t, cmd)
		if code == 0 || !strings.Contains(errs, c.tag) || !strings.Contains(errs, c.dev) {
			t.Errorf("--backend %s in the default build: exit %d, %q; want the build tag and the package named", c.name, code, errs)
		}
	}
}

// under reports whether pkg is dir or a package below it.
func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }
