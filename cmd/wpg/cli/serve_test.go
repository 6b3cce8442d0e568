package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServeRefusals(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "jobs.db")
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--listen", "0.0.0.0:0", "--db", db}, "no token is set"},
		{[]string{"serve", "--listen", "nonsense", "--db", db}, "write host:port"},
		{[]string{"serve", "--token", "a", "--token-file", empty, "--db", db}, "give one of them"},
		{[]string{"serve", "--listen", "0.0.0.0:0", "--token", " ", "--db", db}, "--token: the token is blank"},
		{[]string{"serve", "--listen", "0.0.0.0:0", "--token", "a", "--db", db}, "--token: the token is too short (1 of the 16 characters it needs)"},
		{[]string{"serve", "--token-file", short, "--db", db}, "token file " + short + " (from --token-file): the token is too short (6 of the 16"},
		{[]string{"serve", "--token-file", empty, "--db", db}, "is empty"},
		{[]string{"serve", "--token-file", filepath.Join(dir, "missing"), "--db", db}, "token file"},
		{[]string{"serve", "--listen", "127.0.0.1:80800", "--db", db}, `port "80800" is not a port number`},
		{[]string{"serve", "--listen", "127.0.0.1:0", "--db", filepath.Join(dir, "nodir", "jobs.db")}, "mkdir -p " + filepath.Join(dir, "nodir")},
		{[]string{"serve", "--listen", "127.0.0.1:0", "--db", db, "--job-files", filepath.Join(dir, "nofiles")}, "mkdir -p " + filepath.Join(dir, "nofiles")},
		{[]string{"serve", "--listen", "127.0.0.1:0", "--db", db, "--max-jobs", "0"}, "--max-jobs: 0 is below the minimum 1"},
		{[]string{"serve", "--listen", "127.0.0.1:0", "--db", db, "--max-parses", "0"}, "--max-parses: 0 is below the minimum 1"},
	} {
		_, errs, code := runCLI(t, c.args...)
		if code != ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, errs, ExitUsage, c.want)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a refused serve created its database")
	}
}
