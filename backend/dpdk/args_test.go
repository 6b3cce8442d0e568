package dpdk

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckEALArgs(t *testing.T) {
	if err := checkEALArgs([]string{"--no-huge", "-m", "512", "--vdev", "net_null0"}); err != nil {
		t.Fatal(err)
	}
	err := checkEALArgs([]string{"--vdev", "net_null0", "--help"})
	if err == nil || !strings.Contains(err.Error(), "--help") || !strings.Contains(err.Error(), "drop it") {
		t.Fatalf("--help: %v", err)
	}
}

func TestWantsHugepages(t *testing.T) {
	if wantsHugepages([]string{"-m", "512", "--no-huge"}) {
		t.Error("--no-huge wants no hugepages")
	}
	if !wantsHugepages([]string{"--vdev", "net_null0"}) || !wantsHugepages(nil) {
		t.Error("without --no-huge the EAL maps hugepages")
	}
}

// TestFreeHugepages reads a fixture tree: the free pages of every size
// count, a size without the file does not.
func TestFreeHugepages(t *testing.T) {
	root := t.TempDir()
	for size, free := range map[string]string{"hugepages-2048kB": "3\n", "hugepages-1048576kB": "1\n", "hugepages-64kB": ""} {
		dir := filepath.Join(root, "kernel", "mm", "hugepages", size)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if free != "" {
			if err := os.WriteFile(filepath.Join(dir, "free_hugepages"), []byte(free), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	n, err := freeHugepages(root)
	if err != nil || n != 4 {
		t.Fatalf("free hugepages %d, %v; want 4", n, err)
	}
	if _, err := freeHugepages(filepath.Join(root, "none")); err == nil {
		t.Error("a missing hugepages directory is an error")
	}
	msg := hugepageError([]string{"--vdev", "net_null0"}).Error()
	for _, w := range []string{"nr_hugepages", "--no-huge -m 512", "dpdk.eal_args"} {
		if !strings.Contains(msg, w) {
			t.Errorf("hugepage error %q lacks %q", msg, w)
		}
	}
}

func TestParsePort(t *testing.T) {
	for in, want := range map[string]portChoice{
		"0": {id: 0}, "3": {id: 3}, "net_null0": {id: -1, name: "net_null0"},
		"0000:3b:00.0": {id: -1, name: "0000:3b:00.0"}, "-1": {id: -1, name: "-1"},
	} {
		if got := parsePort(in); got != want {
			t.Errorf("parsePort(%q) = %+v, want %+v", in, got, want)
		}
	}
}
