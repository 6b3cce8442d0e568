//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestQA8bPlotSendWithReceiver: the picture of a send run whose own
// receiver measured loss and latency has a loss and a latency panel
// beside the rate (wpg plot drew the rate alone); a null run has its rate
// only.
func TestQA8bPlotSendWithReceiver(t *testing.T) {
	dir := t.TempDir()
	out, errs, code := run(t, dir, "send", "--backend", "shm", "--duration", "1s", "--interval", "200ms", "--json")
	if code != 0 {
		t.Fatalf("send: exit %d: %s", code, errs)
	}
	if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := run(t, dir, "plot", "run.json", "-o", "run.svg"); code != 0 {
		t.Fatalf("plot: exit %d: %s", code, errs)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "run.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"wpg send shm: rate", "frames lost per second", "one-way latency p99 per interval", "one-way latency"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("the picture of a send with its receiver lacks %q", want)
		}
	}

	out, errs, code = run(t, dir, "send", "--backend", "null", "--duration", "300ms", "--interval", "100ms", "--json")
	if code != 0 {
		t.Fatalf("send null: exit %d: %s", code, errs)
	}
	if err := os.WriteFile(filepath.Join(dir, "null.json"), []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := run(t, dir, "plot", "null.json", "-o", "null.svg"); code != 0 {
		t.Fatalf("plot null: exit %d: %s", code, errs)
	}
	svg, _ = os.ReadFile(filepath.Join(dir, "null.svg"))
	if !strings.Contains(string(svg), "wpg send null: rate") || strings.Contains(string(svg), "lost") || strings.Contains(string(svg), "latency") {
		t.Errorf("the picture of a null run has more than its rate")
	}
}

// TestQA8bLocalToolsSayWhatToDo: the local tools' inputs a new user gets
// wrong are refused with what, where and how to fix, and their figures
// read right.
func TestQA8bLocalToolsSayWhatToDo(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sysinfo", "--stalls", "100ms", "--stall-min", "1s"}, "--stall-min 1s: a stall counted must be shorter than the --stalls 100ms"},
		{[]string{"dmabuf", "bench", "--sync-modes", "1"}, "--sync-modes applies to a u-dma-buf DEVICE"},
		{[]string{"dmabuf", "bench", "/dev/udmabuf0", "--sync-modes", "x"}, `--sync-modes "x": not a whole number: give sync_mode values 0 … 7`},
	} {
		_, errs, code := run(t, dir, c.args...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("wpg %s: exit %d, %q; want %q", strings.Join(c.args, " "), code, errs, c.want)
		}
	}

	// A size of a few bytes is bounded and said so; its rate keeps digits.
	out, errs, code := run(t, dir, "membench", "--sizes", "3", "--methods", "LOCAL-cpy", "--iters", "2")
	if code != 0 || !strings.Contains(out, "at most 1048576 times") || !strings.Contains(out, "warm = iteration 2") || regexp.MustCompile(`\s0\.000(\s|$)`).MatchString(out) {
		t.Errorf("membench of 3 bytes: exit %d: %s%s", code, out, errs)
	}

	// sysinfo's sizes carry their unit.
	out, _, code = run(t, dir, "sysinfo")
	if code != 0 || !strings.Contains(out, "pipe-max-size  ") || !strings.Contains(out, " bytes (") {
		t.Errorf("sysinfo: exit %d:\n%s", code, out)
	}

	// wpg serve: a directory as the database, a missing token file, a bad
	// listen address from wpg.toml (named as the file's, not a flag's).
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--listen", "127.0.0.1:0", "--db", dir}, "is a directory: give the path of a file in it, e.g. --db " + filepath.Join(dir, "jobs.db")},
		{[]string{"serve", "--listen", "127.0.0.1:0", "--token-file", filepath.Join(dir, "no-token")}, "write the token into that file (one line, mode 0600), or give another --token-file"},
	} {
		_, errs, code := run(t, dir, c.args...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("wpg %s: exit %d, %q; want %q", strings.Join(c.args, " "), code, errs, c.want)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "wpg.toml"), []byte("[server]\nlisten = \"nohost\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := run(t, dir, "serve"); code == 0 || !strings.Contains(errs, "missing port in address: write host:port, e.g. 127.0.0.1:8080 (server.listen, from wpg.toml:2)") {
		t.Errorf("wpg serve with listen = \"nohost\" in wpg.toml: exit %d, %q", code, errs)
	}

	// wpg.toml: a misspelt section, a key above its section, another case.
	for doc, want := range map[string]string{
		"[txx]\nring_bytes = 1\n":        "wpg.toml:1:2: unknown section [txx]: the sections are [tx], [server], [dpdk], [port], [send], [recv], [profile.NAME]: did you mean [tx]?",
		"ring_bytes = \"16MiB\"\n":       "wpg.toml:1:1: ring_bytes is a key of section [tx]",
		"[Tx]\nring_bytes = \"32MiB\"\n": "section [Tx]: wpg.toml's names are lower case",
	} {
		if err := os.WriteFile(filepath.Join(dir, "wpg.toml"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		_, errs, code := run(t, dir, "config")
		if code == 0 || !strings.Contains(errs, want) {
			t.Errorf("wpg config of %q: exit %d, %q; want %q", doc, code, errs, want)
		}
	}
}
