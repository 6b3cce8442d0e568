package cli

import (
	"strings"
	"testing"
)

// TestBenchSizesBelowAFrame: --sizes under 64 bytes is a usage error
// naming the flag, before the matrix starts.
func TestBenchSizesBelowAFrame(t *testing.T) {
	out, errs, code := runCLI(t, "bench", "--sizes", "1,64", "--quick")
	if code != ExitUsage || !strings.Contains(errs, "--sizes") || !strings.Contains(errs, "64 bytes") || out != "" {
		t.Errorf("exit %d, out %q, err %q; want %d and the 64-byte minimum", code, out, errs, ExitUsage)
	}
}
