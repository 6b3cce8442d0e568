package template

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// TestGolden pins the decoded Spec and the first frames of every example
// and of the embedded default: parsing and rendering are deterministic,
// and a change to either shows up as a diff of testdata/golden.
func TestGolden(t *testing.T) {
	specs := map[string]*Spec{"default": Default()}
	for _, name := range []string{"mixed", "udp64", "mpls", "gre", "vxlan", "geneve", "raw", "tcp-options", "bad-checksums", "syn-sweep", "fragments", "stream-rates"} {
		specs[name] = mustLoad(t, "../examples/"+name+".wpg.yaml")
	}
	for name, s := range specs {
		t.Run(name, func(t *testing.T) {
			s.File = name // not the path the test ran from
			js, err := json.MarshalIndent(s, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			var frames bytes.Buffer
			for i, f := range render(t, s, CompileOptions{}, 24, 0) {
				fmt.Fprintf(&frames, "%02d %x\n", i, f)
			}
			check(t, filepath.Join("testdata", "golden", name+".spec.json"), append(js, '\n'))
			check(t, filepath.Join("testdata", "golden", name+".frames.txt"), frames.Bytes())
		})
	}
}

func check(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./template -run Golden -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the golden file; if the change is intended, run go test ./template -run Golden -update and review the diff", path)
	}
}
