package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewUserMistakes: plausible mistakes of a first session with wpg are
// refused before anything runs, with exit 2, naming where the mistake is
// (the flag, or the template's file:line:col) and how to fix it.
func TestNewUserMistakes(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "replay.wpg.yaml"), []byte("streams:\n  - name: r\n    pcap: capture.pcap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"ndr resolution over 100 %", []string{"ndr", "--resolution", "200%"}, []string{"flag --resolution", "below 100 %"}},
		{"ndr min above max", []string{"ndr", "--min-rate", "20Gbps"}, []string{"flag --min-rate", "above --max-rate"}},
		{"ndr missing interface", []string{"ndr", "-i", "wpg-nonesuch0", "--rx-interface", "lo"}, []string{"flag -i", "wpg-nonesuch0", "existing: "}},
		{"bench size below a frame", []string{"bench", "--sizes", "32", "--quick"}, []string{"--sizes", "64 bytes"}},
		{"serve port out of range", []string{"serve", "--listen", "127.0.0.1:80800", "--db", filepath.Join(dir, "j.db")}, []string{"80800", "1 to 65535"}},
		{"serve db in a missing directory", []string{"serve", "--listen", "127.0.0.1:0", "--db", filepath.Join(dir, "nodir", "j.db")}, []string{"mkdir -p " + filepath.Join(dir, "nodir")}},
		{"template capture missing", []string{"send", "replay.wpg.yaml", "--backend", "null"}, []string{"replay.wpg.yaml:3:11: streams[0].pcap", "capture.pcap", "template's directory"}},
		{"preview capture missing", []string{"preview", "replay.wpg.yaml"}, []string{"replay.wpg.yaml:3:11: streams[0].pcap"}},
	} {
		out, errs, code := run(t, dir, c.args...)
		if code != 2 {
			t.Errorf("%s: exit %d (want 2): %s", c.name, code, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%s: %q lacks %q", c.name, errs, w)
			}
		}
		if out != "" {
			t.Errorf("%s: printed %q before refusing", c.name, out)
		}
	}
}
