package e2e

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// TestAPIPythonExample (issue #28): docs/api.md's Python example, standard
// library only, starts a job on a live `wpg serve` on loopback, follows its
// events to the end and fetches its report, as written there.
func TestAPIPythonExample(t *testing.T) {
	python := testbed.RequireTool(t, "python3", "python3")
	doc, err := os.ReadFile(repoFile(t, "docs/api.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "\n## Scripting it from Python\n")
	_, rest, ok2 := strings.Cut(rest, "\n```python\n")
	script, _, ok3 := strings.Cut(rest, "\n```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/api.md has no ```python block under \"## Scripting it from Python\"")
	}
	dir := t.TempDir()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	serve := exec.CommandContext(ctx, testbed.Wpg(t), "serve", "--listen", "127.0.0.1:0", "--db", filepath.Join(dir, "jobs.db"))
	stderr, err := serve.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Kill(); serve.Wait() })
	base := ""
	sc := bufio.NewScanner(stderr)
	for base == "" && sc.Scan() {
		if _, after, ok := strings.Cut(sc.Text(), "listening on "); ok {
			base, _, _ = strings.Cut(after, " ")
		}
	}
	if base == "" {
		t.Fatal("wpg serve did not say where it listens")
	}
	go io.Copy(io.Discard, stderr)

	py := exec.CommandContext(ctx, python, "-")
	py.Stdin = strings.NewReader(script)
	py.Env = append(os.Environ(), "WPG="+base)
	out, err := py.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 docs/api.md's example: %v\n%s", err, out)
	}
	for _, want := range []string{"job 1 running", "ended: done", "sent 50000 frames at", "target 100000"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("python3 docs/api.md's example printed no %q:\n%s", want, out)
		}
	}
	if !strings.Contains(string(out), " frames ") {
		t.Errorf("no snapshot line:\n%s", out)
	}
}
