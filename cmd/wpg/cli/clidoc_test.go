package cli

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/memread"
)

var update = flag.Bool("update", false, "rewrite docs/cli.md")

// TestCLIReference keeps docs/cli.md identical to the commands' own help.
func TestCLIReference(t *testing.T) {
	var buf bytes.Buffer
	WriteCLIReference(&buf)
	const path = "../../../docs/cli.md"
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it with: go test ./cmd/wpg/cli -run TestCLIReference -update)", err)
	}
	if !bytes.Equal(old, buf.Bytes()) {
		t.Fatal("docs/cli.md is out of date: go test ./cmd/wpg/cli -run TestCLIReference -update")
	}
}

// TestCLIReferenceHostIndependent: the reference (and so every command's
// help) is the same on a CPU without AVX-512 or AVX2 and in a build with
// more backends. A child test process regenerates it with the CPU features
// turned off (GODEBUG=cpu.avx512f=off,cpu.avx2=off, which x/sys/cpu
// honours) and an extra backend registered; it must equal this process's.
func TestCLIReferenceHostIndependent(t *testing.T) {
	if out := os.Getenv("WPG_CLIDOC_CHILD"); out != "" {
		// As a build with -tags pcap: the backend this build has as
		// absent (backend.RegisterAbsent) is registered.
		backend.Register(backend.Registration{Name: "pcap", Kind: backend.KindNetwork, Summary: "registered by a test"})
		var names []string
		for _, im := range memread.Available() {
			names = append(names, im.Name)
		}
		fmt.Fprintf(os.Stderr, "readers on this CPU: %s\n", strings.Join(names, ","))
		var buf bytes.Buffer
		WriteCLIReference(&buf)
		if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	var want bytes.Buffer
	WriteCLIReference(&want)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCLIReferenceHostIndependent$")
	out := filepath.Join(t.TempDir(), "cli.md")
	cmd.Env = append(os.Environ(), "WPG_CLIDOC_CHILD="+out, "GODEBUG=cpu.avx512f=off,cpu.avx2=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\n%s", err, stderr.String())
	}
	child, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "readers on this CPU: go\n") {
		t.Fatalf("the child was to run with the pure-Go reader only; it said %q", stderr.String())
	}
	if string(child) != want.String() {
		t.Fatalf("the CLI reference depends on the CPU or the build:\n%s", firstDiff(want.String(), string(child)))
	}
}

// firstDiff shows the first line where a and b differ.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n  here:  %s\n  child: %s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d lines", len(al), len(bl))
}

// TestCLIReferenceNestedNames: every command's section in docs/cli.md is
// headed by its whole path and its usage line starts with it, so a nested
// command reads as what a user types: "wpg dmabuf bench", not "wpg
// bench" (which is another command) or "wpg info" (which is none).
func TestCLIReferenceNestedNames(t *testing.T) {
	var buf bytes.Buffer
	WriteCLIReference(&buf)
	root := NewRoot()
	seen := map[string]bool{}
	lines := strings.Split(buf.String(), "\n")
	for i, line := range lines {
		path, ok := strings.CutPrefix(line, "## wpg ")
		if !ok {
			continue
		}
		if seen[path] {
			t.Errorf("two sections are headed %q", line)
		}
		seen[path] = true
		c, rest, err := root.Find(strings.Fields(path))
		if err != nil || len(rest) > 0 || c.CommandPath() != "wpg "+path {
			t.Errorf("section %q: no such command (found %v, %v)", line, c.CommandPath(), err)
			continue
		}
		// The usage line: the first line of the section's first code block.
		for j := i + 1; j < len(lines) && j < i+8; j++ {
			if lines[j] == "```" {
				if use := lines[j+1]; !strings.HasPrefix(use, "wpg "+path) {
					t.Errorf("section %q: the usage line is %q", line, use)
				}
				break
			}
		}
	}
	for _, want := range []string{"dmabuf bench", "dmabuf info", "report merge"} {
		if !seen[want] {
			t.Errorf("no section for wpg %s", want)
		}
	}
}
