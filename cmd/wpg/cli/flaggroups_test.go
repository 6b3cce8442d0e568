package cli

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestFlagGroups (issue #29): send --help listed its 60-odd flags flat;
// send, bench, recv and ndr show them in groups (rate, frames, paths and
// workers, network paths, local paths, port pairs, segments, output…),
// in --help and in docs/cli.md alike. Every flag of theirs is in a group
// (but --help), and every flag a group names exists.
func TestFlagGroups(t *testing.T) {
	root := NewRoot()
	for name, groups := range commandGroups {
		c, _, err := root.Find([]string{name})
		if err != nil || c.Name() != name {
			t.Fatalf("no command %s: %v", name, err)
		}
		c.InitDefaultHelpFlag()
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" && len(f.Annotations[flagGroupKey]) == 0 {
				t.Errorf("%s --%s is in no group: add it to a group of commandGroups (flaggroups.go)", name, f.Name)
			}
		})
		for _, g := range groups {
			for _, fl := range g.flags {
				found := false
				for cmd, gs := range commandGroups {
					if &gs[0] != &groups[0] {
						continue
					}
					if c2, _, _ := root.Find([]string{cmd}); c2.Flags().Lookup(fl) != nil {
						found = true
					}
				}
				if !found {
					t.Errorf("group %q names --%s, which no command of its table has", g.title, fl)
				}
			}
		}
	}
	out, _, code := wpg(t, "send", "--help")
	if code != 0 {
		t.Fatalf("send --help: exit %d", code)
	}
	var last int
	for _, want := range []string{"Rate:\n      --burst", "\nFrames and how many:\n      --count", "\nPath and workers:\n", "\nNetwork paths (afpacket, afxdp, dpdk, pcapfile):\n", "\nLocal and device paths", "\nDevice testing: port pairs", "\nSegments and metrics", "\nOutput:\n", "\nOther flags:\n  -h, --help", "\nGlobal Flags:\n"} {
		i := strings.Index(out, want)
		if i < last {
			t.Errorf("send --help lacks %q after the groups before it:\n%s", want, out)
		}
		last = max(i, last)
	}
	if strings.Contains(out, "\nFlags:\n") {
		t.Error("send --help still lists its flags flat")
	}
	// A command without groups lists its flags as before.
	if out, _, _ := wpg(t, "preview", "--help"); !strings.Contains(out, "\nFlags:\n") {
		t.Errorf("preview --help:\n%s", out)
	}
}
