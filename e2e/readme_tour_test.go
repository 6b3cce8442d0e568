//go:build linux

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// tourLines are the command lines of the README's "A first tour", their
// comments cut off.
func tourLines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(repoFile(t, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "## A first tour")
	if i < 0 {
		t.Fatal(`README.md has no "## A first tour"`)
	}
	s = s[i:]
	start := strings.Index(s, "```sh\n") + len("```sh\n")
	end := strings.Index(s[start:], "```")
	comment := regexp.MustCompile(`\s+#\s.*$`)
	var lines []string
	for _, l := range strings.Split(s[start:start+end], "\n") {
		if l = strings.TrimSpace(comment.ReplaceAllString(l, "")); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestReadmeTourIsSelfContained (issue #29): the README's tour used
// veth0, veth1 and a namespace ns without saying how to make them, and
// replayed a capture.pcap that was nowhere. Every interface and namespace
// the tour uses is made by an earlier line of it, and every capture it
// replays is one an earlier line writes or one in the tree.
func TestReadmeTourIsSelfContained(t *testing.T) {
	lines := tourLines(t)
	made := map[string]bool{}
	written := map[string]bool{}
	out := regexp.MustCompile(`(?:^|\s)-o\s+(\S+)`)
	pcap := regexp.MustCompile(`--pcap\s+(\S+)`)
	for _, l := range lines {
		for _, name := range []string{"veth0", "veth1", "ns"} {
			uses := regexp.MustCompile(`(^|[\s/])` + name + `(\s|$)`).MatchString(l)
			creates := strings.Contains(l, "ip link add "+name) || strings.Contains(l, "peer name "+name) || strings.Contains(l, "ip netns add "+name)
			if creates {
				made[name] = true
			} else if uses && !made[name] {
				t.Errorf("the tour uses %s before a line makes it: %q", name, l)
			}
		}
		for _, m := range pcap.FindAllStringSubmatch(l, -1) {
			if _, err := os.Stat(repoFile(t, m[1])); !written[m[1]] && err != nil {
				t.Errorf("the tour replays %s, which no earlier line writes and the tree does not hold: %q", m[1], l)
			}
		}
		for _, m := range out.FindAllStringSubmatch(l, -1) {
			written[m[1]] = true
		}
	}
	for _, name := range []string{"veth0", "veth1", "ns"} {
		if !made[name] {
			t.Errorf("no line of the tour makes %s", name)
		}
	}
}

// TestReadmeTourVethLines: the tour's lines that make the veth pair and
// its namespace, receive on veth1 and replay the capture the tour wrote
// on veth0 do that as written (without sudo: the test is root), in a
// network and mount namespace of the test's own, so that neither the
// interfaces nor the namespace ns reach the host.
func TestReadmeTourVethLines(t *testing.T) {
	testbed.RequireRoot(t)
	testbed.RequireTool(t, "ip", "iproute2")
	unshare := testbed.RequireTool(t, "unshare", "util-linux")
	var script []string
	for _, l := range tourLines(t) {
		l = strings.ReplaceAll(l, "sudo ", "")
		switch {
		case strings.Contains(l, "wpg recv -i veth1"):
			// Wait for the receiver's ready line, as its comment says.
			script = append(script, strings.TrimSuffix(strings.TrimSpace(l), "&")+" >rx.out 2>rx.err &",
				`for i in $(seq 300); do grep -q "receiving on" rx.err && break; sleep 0.1; done`)
		case strings.Contains(l, "--backend pcapfile -o out.pcap"), strings.HasPrefix(l, "ip "):
			script = append(script, l)
		case strings.Contains(l, "--pcap out.pcap"):
			script = append(script, l, "wait")
		}
	}
	if len(script) != 7 {
		t.Fatalf("found %d of the tour's lines to run, want 7:\n%s", len(script), strings.Join(script, "\n"))
	}
	dir := t.TempDir() // the tour runs in the tree: examples/ there
	if err := os.Symlink(repoFile(t, "examples"), filepath.Join(dir, "examples")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("/run/netns", 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	body := "set -e\nmount -t tmpfs tmpfs /run/netns\ncd " + dir + "\n" + strings.Join(script, "\n") + "\n"
	cmd := exec.CommandContext(ctx, unshare, "--net", "--mount", "--propagation", "private", "sh", "-c", body)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(testbed.WpgShared(t))+":"+os.Getenv("PATH"))
	if outb, err := cmd.CombinedOutput(); err != nil {
		rx, _ := os.ReadFile(filepath.Join(dir, "rx.err"))
		t.Fatalf("the tour's lines: %v\n%s\n%s\nscript:\n%s", err, outb, rx, body)
	}
	rx, err := os.ReadFile(filepath.Join(dir, "rx.out"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^frames\s+100000\s`).Match(rx) {
		t.Errorf("the receiver on veth1 did not count the capture's 100000 frames:\n%s", rx)
	}
}
