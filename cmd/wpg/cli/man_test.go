package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/testbed"
	"github.com/wpg-dev/wpg/pace"
)

// TestManPages (issue #28): wpg man DIR writes a section-1 page for every
// command, and man -l of wpg-send.1 shows every flag of send, its own and
// the root's (--config, --profile).
func TestManPages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man")
	out, errs, code := runCLI(t, "man", dir)
	if code != 0 || !strings.Contains(out, "wrote") {
		t.Fatalf("wpg man: exit %d, %s %s", code, out, errs)
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c.HasParent() {
			return
		}
		page := strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1"
		b, err := os.ReadFile(filepath.Join(dir, page))
		if err != nil {
			t.Errorf("no man page for %q: %v", c.CommandPath(), err)
		}
		// Each page is titled by its own name (man's header WPG-SEND(1)),
		// not every one WPG(1).
		if th := fmt.Sprintf(".TH %q \"1\"", strings.ToUpper(strings.TrimSuffix(page, ".1"))); err == nil && !strings.Contains(string(b), th) {
			t.Errorf("%s: no %s line: %.120q", page, th, b)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	root := NewRoot()
	walk(root)

	man := testbed.RequireTool(t, "man", "man-db")
	cmd := exec.Command(man, "-l", filepath.Join(dir, "wpg-send.1"))
	cmd.Env = append(os.Environ(), "MANWIDTH=1000", "LC_ALL=C.UTF-8", "MANPAGER=cat", "PAGER=cat")
	page, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("man -l wpg-send.1: %v\n%s", err, page)
	}
	text := regexp.MustCompile(".\x08").ReplaceAllString(string(page), "") // overstrike, where kept
	send, _, err := root.Find([]string{"send"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	check := func(fl *pflag.Flag) {
		n++
		if !strings.Contains(text, "--"+fl.Name) {
			t.Errorf("man -l wpg-send.1 does not show --%s", fl.Name)
		}
		if fl.Shorthand != "" && !strings.Contains(text, "-"+fl.Shorthand+", --"+fl.Name) {
			t.Errorf("man -l wpg-send.1 does not show -%s, --%s", fl.Shorthand, fl.Name)
		}
	}
	send.NonInheritedFlags().VisitAll(check)
	send.InheritedFlags().VisitAll(check)
	if n < 50 || !strings.Contains(text, "--profile") || !strings.Contains(text, "wpg-send - send a template's streams") {
		t.Errorf("man -l wpg-send.1: %d flags checked; the page:\n%s", n, text)
	}
}

// complete runs `wpg __complete args…` and returns the candidates (the
// text before a tab) and the directive line.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	out, errs, code := runCLI(t, append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("wpg __complete %q: exit %d: %s", args, code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var got []string
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t")
		got = append(got, name)
	}
	return got, lines[len(lines)-1]
}

// TestCompletionOfFlagValues (issue #28): shell completion completes flag
// values, not only names: `wpg __complete send --backend ”` lists this
// build's backends, -i the namespace's interfaces, and the enumerations
// their words.
func TestCompletionOfFlagValues(t *testing.T) {
	got, directive := complete(t, "send", "--backend", "")
	if !slices.Equal(got, backend.Names()) || directive != ":4" {
		t.Errorf("send --backend: %q %s, want %q and no files (:4)", got, directive, backend.Names())
	}
	if got, _ := complete(t, "recv", "-i", ""); !slices.Contains(got, "lo") {
		t.Errorf("recv -i: %q, want the interfaces, lo among them", got)
	}
	for args, want := range map[string][]string{
		"send --plan":  {"auto", "prerender", "stream"},
		"send --wait":  {"hybrid", "spin", "sleep"},
		"bench --wait": {"hybrid", "spin", "sleep"},
		"send --clock": {"auto", "tsc", "monotonic"},
	} {
		if got, _ := complete(t, append(strings.Fields(args), "")...); !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", args, got, want)
		}
	}
	if got, directive := complete(t, "send", ""); !slices.Contains(got, "yaml") || directive != ":8" {
		t.Errorf("send's TEMPLATE: %q %s, want YAML files (:8, FilterFileExt)", got, directive)
	}
}

// TestCompletionOfRates: --rate (send, bench) and ndr's --max-rate and
// --min-rate offer example rates with what each means, every one accepted
// by the flag, and no file names (they offered the directory's files);
// ndr's --router-shape its example bit rates (it offered nothing).
func TestCompletionOfRates(t *testing.T) {
	for _, args := range [][]string{{"send", "--rate"}, {"bench", "--rate"}, {"ndr", "--max-rate"}, {"ndr", "--min-rate"}, {"ndr", "--router-shape"}} {
		out, errs, code := runCLI(t, append([]string{"__complete"}, append(args, "")...)...)
		if code != 0 {
			t.Fatalf("wpg __complete %q: exit %d: %s", args, code, errs)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if directive := lines[len(lines)-1]; directive != ":4" {
			t.Errorf("%s: directive %s, want no files (:4)", args, directive)
		}
		var got []string
		for _, l := range lines[:len(lines)-1] {
			v, desc, _ := strings.Cut(l, "\t")
			got = append(got, v)
			if desc == "" {
				t.Errorf("%s: %q has no description", args, v)
			}
			r, err := pace.ParseRate(v)
			if err != nil || args[0] == "ndr" && (r.Unlimited() || r.IFG() || r.LinkShare()) ||
				args[1] == "--router-shape" && (!r.Bits() || r.FramesPerSecond(1, pace.L2)*8 < 8000) {
				t.Errorf("%s: offers %q, which the flag refuses (%v)", args, v, err)
			}
		}
		wants := []string{"1Mpps", "10Gbps", "1Gbit/s"}
		if args[1] == "--router-shape" {
			wants = []string{"20Mbps", "1Gbit/s"} // a bit rate only (tbf's)
		}
		for _, want := range wants {
			if !slices.Contains(got, want) {
				t.Errorf("%s: %q, want %s among them", args, got, want)
			}
		}
		if args[0] != "ndr" && !slices.Contains(got, "50%") {
			t.Errorf("%s: %q, want 50%% among them", args, got)
		}
	}
}

// TestCompletionValuesAreAccepted: every word completion offers for a
// flag is one its usage names, on every command that has the flag.
func TestCompletionValuesAreAccepted(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			choices, ok := flagChoices[fl.Name]
			if !ok || slices.Contains([]string{"backend", "rx-backend", "interface", "rx-interface", "profile", "rate", "max-rate", "min-rate", "router-shape"}, fl.Name) {
				// Rates are examples of a syntax: TestCompletionOfRates parses them.
				return
			}
			for _, w := range choices(c) {
				if !regexp.MustCompile(`\b` + w + `\b`).MatchString(fl.Usage) {
					t.Errorf("%s --%s: completion offers %q, which the usage %q does not name", c.CommandPath(), fl.Name, w, fl.Usage)
				}
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRoot())
}

// TestCompletionOfPathsOnly: shell completion offers file names for a
// flag's value only where the value is a path (wpg ndr --router-shape
// <TAB> offered the directory's files; now its example bit rates:
// TestCompletionOfRates). The test walks the whole command
// tree and asks `wpg __complete CMD --FLAG ”` of every flag that takes a
// value: the flags below may complete files (or directories), every other
// one must not.
func TestCompletionOfPathsOnly(t *testing.T) {
	paths := []string{ // "CMD --FLAG" (or "* --FLAG": every command that has it) whose value is a path
		"* --config",       // the configuration file
		"* --output",       // pcapfile's file; plot's picture; report's page and JSON
		"* --hdr-out",      // the histogram log
		"* --payload-file", // the payload's content
		"* --fifo",         // pipe: the FIFO
		"* --connect",      // the receiver's rendezvous socket
		"* --device",       // udmabuf: /dev/udmabufN
		"* --netns",        // a name of ip netns, or a file such as /proc/PID/ns/net
		"* --rx-netns",
		"wpg send --pcap",
		"wpg recv --listen", // the rendezvous socket (serve's --listen is host:port)
		"wpg dmabuf --dev-root",
		"wpg dmabuf --sys-root",
		"wpg serve --db",
		"wpg serve --job-files",
		"wpg serve --token-file",
	}
	seen := map[string]bool{}
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			if typ := fl.Value.Type(); typ == "bool" || typ == "count" {
				return // no value to complete
			}
			args := append(strings.Fields(c.CommandPath())[1:], "--"+fl.Name, "")
			if fl.NoOptDefVal != "" {
				args = append(args[:len(args)-2], "--"+fl.Name+"=") // its value only after =
			}
			_, directive := complete(t, args...)
			d, err := strconv.Atoi(strings.TrimPrefix(directive, ":"))
			if err != nil {
				t.Fatalf("%s --%s: directive %q", c.CommandPath(), fl.Name, directive)
			}
			n++
			files := d&int(cobra.ShellCompDirectiveNoFileComp) == 0
			which := c.CommandPath() + " --" + fl.Name
			path := slices.Contains(paths, which) || slices.Contains(paths, "* --"+fl.Name)
			seen[which], seen["* --"+fl.Name] = true, true
			switch {
			case files && !path:
				t.Errorf("%s (%s): completes file names (directive %s), but its value is not a path: give it its values or cobra.NoFileCompletions (or add it to this test's paths if it is one)", which, fl.Value.Type(), directive)
			case !files && path:
				t.Errorf("%s: completes no file names (directive %s), but its value is a path", which, directive)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRoot())
	for _, p := range paths {
		if !seen[p] {
			t.Errorf("%s: no such flag (a path flag was renamed or removed: update this test)", p)
		}
	}
	if n < 100 {
		t.Errorf("asked %d flags, want the whole tree's (at least 100)", n)
	}
}
