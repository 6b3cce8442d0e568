package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUsageExitCodes (#23 item 15): --connect with a socket path on the
// pipe backend, which has no rendezvous socket, is a usage error (it
// exited 1 from the worker), and a rate too small to represent is refused
// without printing its 300-digit period.
func TestUsageExitCodes(t *testing.T) {
	notSock := filepath.Join(t.TempDir(), "not-a-socket")
	if err := os.WriteFile(notSock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	checkUsage(t, []usageCase{
		{"pipe --connect a file", []string{"send", "--backend", "pipe", "--connect", notSock, "--count", "1"}, []string{"--connect", notSock, "no rendezvous socket", "--fifo"}},
		{"pipe --connect a missing path", []string{"send", "--backend", "pipe", "--connect", notSock + ".missing", "--count", "1"}, []string{"--connect", "no rendezvous socket"}},
		{"bench pipe --connect", []string{"bench", "--backend", "pipe", "--connect", notSock, "--duration", "100ms"}, []string{"--connect", "no rendezvous socket"}},
	})
	_, errs, code := wpg(t, "send", "--rate", "1e-300pps", "--count", "1")
	if code != ExitUsage || len(errs) > 300 {
		t.Errorf("--rate 1e-300pps: exit %d, %d bytes: %.400s; want exit 2 and a short line", code, len(errs), errs)
	}
}
