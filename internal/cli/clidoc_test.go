package cli

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/cli.md")

// TestCLIReference keeps docs/cli.md identical to the commands' own help.
func TestCLIReference(t *testing.T) {
	var buf bytes.Buffer
	WriteCLIReference(&buf)
	const path = "../../docs/cli.md"
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it with: go test ./internal/cli -run TestCLIReference -update)", err)
	}
	if !bytes.Equal(old, buf.Bytes()) {
		t.Fatal("docs/cli.md is out of date: go test ./internal/cli -run TestCLIReference -update")
	}
}
