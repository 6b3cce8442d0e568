package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Sizes read the same way in every command: KB = 1000, KiB = K = 1024
// (issue #17 item 29: membench --sizes read 16MB as 16 MiB). A size too
// large for any setting is an error naming the largest one, not a strconv
// error (item 32), and it exits 2.
func TestUnitsOneRuleEverywhere(t *testing.T) {
	dir := t.TempDir()
	// membench: 4KB is 4000 bytes, 4KiB 4096.
	out, errs, code := run(t, dir, "membench", "--sizes", "4KB,4KiB", "--methods", "LOCAL-cpy", "--iters", "1", "--min-bytes", "0", "--json")
	if code != 0 {
		t.Fatalf("membench: exit %d: %s", code, errs)
	}
	var rep struct {
		Sizes []int64 `json:"sizes"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("membench JSON: %v\n%s", err, out)
	}
	if len(rep.Sizes) != 2 || rep.Sizes[0] != 4000 || rep.Sizes[1] != 4096 {
		t.Errorf("membench --sizes 4KB,4KiB = %v, want [4000 4096]", rep.Sizes)
	}
	// wpg.toml and wpg config: "1MB" is 1,000,000 bytes.
	if err := os.WriteFile(filepath.Join(dir, "wpg.toml"), []byte("[tx]\nring_bytes = \"1MB\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code = run(t, dir, "config", "--json")
	if code != 0 || !strings.Contains(out, "1000000") {
		t.Errorf("config with ring_bytes = \"1MB\": exit %d, %s%s", code, out, errs)
	}
	// --size 1MB on a local path: a payload of 1,000,000 bytes in frames of 1,000,032.
	out, errs, code = run(t, dir, "send", "--backend", "memcpy", "--size", "1MB", "--count", "2")
	if code != 0 || !strings.Contains(out, "1000032.0 bytes mean") || !strings.Contains(out, "2000000 of payload") {
		t.Errorf("send --size 1MB: exit %d\n%s%s", code, out, errs)
	}
	// Too large for anything: the largest value, not strconv.
	for b, largest := range map[string]string{"memcpy": "at most 1 GiB", "null": "62..9216"} {
		_, errs, code = run(t, dir, "send", "--backend", b, "--size", "99999999999999999999", "--count", "1")
		if code != 2 || strings.Contains(errs, "strconv") || !strings.Contains(errs, "too large") || !strings.Contains(errs, largest) {
			t.Errorf("--backend %s --size 99999999999999999999: exit %d, %q", b, code, errs)
		}
	}
}

// wpg --version is a flag and prints what wpg version prints (item 30).
func TestVersionFlag(t *testing.T) {
	dir := t.TempDir()
	flag, errs, code := run(t, dir, "--version")
	cmd, _, code2 := run(t, dir, "version")
	if code != 0 || code2 != 0 || flag != cmd || !strings.HasPrefix(flag, "wpg ") {
		t.Errorf("wpg --version: exit %d %q (%s); wpg version: exit %d %q", code, flag, errs, code2, cmd)
	}
}

// A type error in wpg.toml says file:line:col, the key, the expected type
// and an example, and exits 2 (item 32).
func TestConfigTypeError(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "wpg.toml"), []byte("[tx]\nring_bytes = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := run(t, dir, "config")
	want := `wpg.toml:2:14: tx.ring_bytes: true is a boolean: want a byte size: a whole number of bytes or a quoted size with a unit, e.g. ring_bytes = 16777216 or ring_bytes = "16MiB"`
	if code != 2 || !strings.Contains(errs, want) {
		t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, errs, want)
	}
}
