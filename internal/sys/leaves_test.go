package sys_test

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// leafPublic lists the public packages that a package under internal/ may
// import, each with the reason. internal/ is for leaves that every level
// may use (docs/architecture.md, "Layering"); a public package is allowed
// here only when it is a leaf itself, which the test checks too.
var leafPublic = map[string]string{
	"units": "sizes and counts: one parser and printer, imported by internal/sys for its size errors",
}

// TestInternalIsForLeaves keeps internal/ for leaves: no package under it
// imports a package of the module outside internal/ (the CLI, the peer
// protocol, backends, recv, job), except the leaf public packages of
// leafPublic. A package that needs one of those belongs at the level of
// what it imports, not under internal/.
func TestInternalIsForLeaves(t *testing.T) {
	const module = "github.com/wpg-dev/wpg/"
	out, err := exec.Command("go", "list", "-e", "-tags", "pcap,dpdk", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], module) {
			continue
		}
		var own []string
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, module) {
				own = append(own, strings.TrimPrefix(imp, module))
			}
		}
		imports[strings.TrimPrefix(f[0], module)] = own
	}
	internal := func(rel string) bool { return rel == "internal" || strings.HasPrefix(rel, "internal/") }
	var checked int
	for rel, own := range imports {
		if !internal(rel) {
			continue
		}
		checked++
		for _, imp := range own {
			if internal(imp) {
				continue
			}
			if _, ok := leafPublic[imp]; ok {
				continue
			}
			t.Errorf("%s imports %s, a package above internal/: move the importer to the level of what it imports (docs/architecture.md), or add a leaf to leafPublic (internal/sys/leaves_test.go) with the reason", rel, imp)
		}
	}
	if checked == 0 {
		t.Fatal("go list found no package under internal/")
	}
	var names []string
	for rel := range leafPublic {
		names = append(names, rel)
	}
	sort.Strings(names)
	for _, rel := range names {
		own, ok := imports[rel]
		if !ok {
			t.Errorf("leafPublic lists %s, which go list does not find: remove it from the list", rel)
			continue
		}
		for _, imp := range own {
			if !internal(imp) {
				t.Errorf("leafPublic lists %s, which is no leaf: it imports %s", rel, imp)
			}
		}
	}
}
