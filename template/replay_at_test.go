package template

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayMissingCaptureIsLocated: a capture a template names that does
// not exist is an error at the template's file:line:col of its pcap key,
// saying where a relative path was looked for, both when the captures are
// loaded (wpg send) and when a source is compiled without loading them
// first (wpg preview).
func TestReplayMissingCaptureIsLocated(t *testing.T) {
	dir := t.TempDir()
	tpl := filepath.Join(dir, "t.wpg.yaml")
	spec, err := Parse(tpl, []byte("streams:\n  - name: a\n    pcap: missing.pcap\n"))
	if err != nil {
		t.Fatal(err)
	}
	at := tpl + ":3:11: streams[0].pcap"
	check := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.HasPrefix(err.Error(), at) || !strings.Contains(err.Error(), "template's directory, "+dir) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v; want it to start with %q and name the directory %s", what, err, at, dir)
		}
	}
	check("LoadCaptures", spec.LoadCaptures())
	_, err = Compile(spec, CompileOptions{Workers: 1})
	check("Compile", err)

	abs, err := Parse(tpl, []byte("streams: [{pcap: "+filepath.Join(dir, "none.pcap")+"}]"))
	if err != nil {
		t.Fatal(err)
	}
	if err := abs.LoadCaptures(); err == nil || !strings.HasPrefix(err.Error(), tpl+":1:") || strings.Contains(err.Error(), "relative") {
		t.Errorf("absolute path: %v; want the position and no word of a relative path", err)
	}
}
