package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	t.Setenv("WPG_CONFIG", "")
	t.Chdir(t.TempDir()) // no ./wpg.toml
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestPreviewDefault(t *testing.T) {
	out, errs, code := runCLI(t, "preview", "-n", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"frame 0: stream 0 (udp64) seq 0, 64 bytes", "UDP          1024 → 9", "frame 1:", "UDP          1025 → 9", "checksum", "ok", "00000030"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "BAD") {
		t.Errorf("bad checksum in preview:\n%s", out)
	}
}

func TestPreviewCap(t *testing.T) {
	_, errs, code := runCLI(t, "preview", "-n", "257")
	if code == 0 || !strings.Contains(errs, "server.preview_max = 256") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

func TestPreviewBadTemplate(t *testing.T) {
	_, errs, code := runCLI(t, "preview", "/nonexistent/x.wpg.yaml")
	if code == 0 || !strings.Contains(errs, "no such file") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}
