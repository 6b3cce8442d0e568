package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// Issue #17 item 8: --ring-depth 3 silently became 32 on afpacket. The
// report gives the effective depth and a note saying why.
func TestRingDepthAdjustedSaysWhy(t *testing.T) {
	v := testbed.NewVeth(t)
	out, errs, code := run(t, t.TempDir(), "send", "-i", v.Outer, "--ring-depth", "3", "--count", "10", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep struct {
		Backend struct {
			RingDepth int      `json:"ring_depth"`
			Adjusted  []string `json:"adjusted"`
		}
		Notes []string
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Backend.RingDepth <= 3 || len(rep.Backend.Adjusted) != 1 || !strings.Contains(rep.Backend.Adjusted[0], "--ring-depth 3 raised to") {
		t.Fatalf("backend %+v: want the raised depth and why", rep.Backend)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "--ring-depth 3 raised to") {
		t.Fatalf("notes %q lack the ring depth", rep.Notes)
	}
	table, errs, code := run(t, t.TempDir(), "send", "-i", v.Outer, "--ring-depth", "3", "--count", "10")
	if code != 0 || !strings.Contains(table, "note") || !strings.Contains(table, "--ring-depth 3 raised to") {
		t.Fatalf("exit %d: table lacks the note: %s%s", code, table, errs)
	}
}
