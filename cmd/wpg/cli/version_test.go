package cli

import (
	"bytes"
	"context"
	"runtime/debug"
	"strings"
	"testing"
)

// A `go install …@v1.2.3` binary reports v1.2.3, not "dev" (issue #17 item 30).
func TestVersionFromBuildInfo(t *testing.T) {
	installed := &debug.BuildInfo{Main: debug.Module{Path: "github.com/wpg-dev/wpg", Version: "v1.2.3"}}
	if got := formatVersion("dev", installed, "go1.26", "linux/amd64"); got != "wpg v1.2.3 go1.26 linux/amd64" {
		t.Errorf("go install @v1.2.3: %q", got)
	}
	tree := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "2444ef3c0ffee0123456789"}, {Key: "vcs.time", Value: "2026-11-30T12:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	if got := formatVersion("dev", tree, "go1.26", "linux/amd64"); got != "wpg dev (2444ef3c0ffe 2026-11-30T12:00:00Z, modified) go1.26 linux/amd64" {
		t.Errorf("source tree: %q", got)
	}
	if got := formatVersion("v2.0.0", installed, "go1.26", "linux/amd64"); !strings.HasPrefix(got, "wpg v2.0.0 ") {
		t.Errorf("a link-time version must win: %q", got)
	}
	if got := formatVersion("dev", nil, "go1.26", "linux/amd64"); got != "wpg dev go1.26 linux/amd64" {
		t.Errorf("no build info: %q", got)
	}
}

// wpg --version is a flag, and prints what wpg version prints.
func TestVersionFlag(t *testing.T) {
	run := func(args ...string) string {
		var out, errOut bytes.Buffer
		if code := Main(context.Background(), args, &out, &errOut); code != 0 {
			t.Fatalf("wpg %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
		}
		return out.String()
	}
	flag, cmd := run("--version"), run("version")
	if flag != cmd || !strings.HasPrefix(cmd, "wpg ") || strings.Count(cmd, "\n") != 1 {
		t.Errorf("wpg --version printed %q, wpg version %q", flag, cmd)
	}
}
