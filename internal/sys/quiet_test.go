package sys_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/wpg-dev/wpg"

// speakers may print, exit, use the standard streams and read the
// environment: the program and its command layer, and the helpers that
// only tests import (a TestMain re-executing the test binary as a child
// reads an environment variable and exits by design). Every package named
// main is a program and speaks too.
var speakers = map[string]string{
	"cmd/wpg":          "the program",
	"cmd/wpg/cli":      "the command layer: flags, printing, exit codes",
	"internal/testbed": "test support",
	"peer/peertest":    "test support: the re-executed receiver child of backend tests",
	"e2e":              "tests of the binary",
}

// quietToFix lists the places in library packages that still print or
// read the environment, by "package: call", each with the item that
// removes it. The test fails when one of them is gone, so that the list
// shrinks with the code.
var quietToFix = map[string]string{}

// forbidden are the package-level functions and variables a library
// package must not use, by import path.
var forbidden = map[string]map[string]string{
	"os": {
		"Stdin": "the standard streams", "Stdout": "the standard streams", "Stderr": "the standard streams",
		"Exit": "exits the process", "Getenv": "reads the environment", "LookupEnv": "reads the environment",
		"Environ": "reads the environment", "ExpandEnv": "reads the environment", "Setenv": "changes the environment",
		"Unsetenv": "changes the environment", "Clearenv": "changes the environment",
		"UserHomeDir": "reads $HOME", "UserConfigDir": "reads $XDG_CONFIG_HOME", "UserCacheDir": "reads $XDG_CACHE_HOME",
	},
	"fmt": {"Print": "prints to stdout", "Printf": "prints to stdout", "Println": "prints to stdout"},
	"log": {
		"Print": "logs to stderr", "Printf": "logs to stderr", "Println": "logs to stderr",
		"Fatal": "exits", "Fatalf": "exits", "Fatalln": "exits", "Panic": "logs to stderr", "Panicf": "logs to stderr",
		"Panicln": "logs to stderr", "Default": "the process logger", "SetOutput": "the process logger",
	},
	"log/slog": {
		"Debug": "the process logger", "Info": "the process logger", "Warn": "the process logger", "Error": "the process logger",
		"DebugContext": "the process logger", "InfoContext": "the process logger", "WarnContext": "the process logger",
		"ErrorContext": "the process logger", "Log": "the process logger", "LogAttrs": "the process logger",
		"Default": "the process logger", "SetDefault": "the process logger",
	},
	"syscall": {
		"Stdin": "the standard streams", "Stdout": "the standard streams", "Stderr": "the standard streams",
		"Getenv": "reads the environment", "Environ": "reads the environment", "Exit": "exits the process",
	},
	"golang.org/x/sys/unix": {
		"Stdin": "the standard streams", "Stdout": "the standard streams", "Stderr": "the standard streams",
		"Getenv": "reads the environment", "Environ": "reads the environment", "Exit": "exits the process",
	},
}

// TestLibraryPackagesAreQuiet fails when a package other than the
// speakers writes to the standard streams, opens or uses fd 0, 1 or 2 by
// number, exits the process, prints through fmt.Print*, log or the default
// slog logger, or reads the environment: a library reports through what
// its caller passes in (an io.Writer, a logger, the report). The scan
// covers every non-test Go file of every package of the module, for every
// GOOS/GOARCH, with go/parser (imports resolved by name per file).
func TestLibraryPackagesAreQuiet(t *testing.T) {
	pkgs := modulePackages(t)
	found := map[string][]string{} // "pkg: what" → positions
	for _, p := range pkgs {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if _, ok := speakers[rel]; ok || p.Name == "main" {
			continue // a program (scripts/…) speaks to its user
		}
		files, _ := filepath.Glob(filepath.Join(p.Dir, "*.go"))
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			for _, v := range scanQuiet(t, file) {
				key := rel + ": " + v.what
				found[key] = append(found[key], v.pos)
			}
		}
	}
	keys := make([]string, 0, len(found))
	for k := range found {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := quietToFix[k]; ok {
			t.Logf("to fix: %s at %s", k, strings.Join(found[k], ", "))
			continue
		}
		t.Errorf("%s at %s: a library package must not print, exit, use fd 0/1/2 or read the environment; take an io.Writer, a logger or the value from the caller (job.Env), or put a warning into the report", k, strings.Join(found[k], ", "))
	}
	for k := range quietToFix {
		if _, ok := found[k]; !ok {
			t.Errorf("quietToFix lists %q, which is no longer found: remove it from the list", k)
		}
	}
}

type goPackage struct {
	ImportPath string
	Name       string
	Dir        string
}

// modulePackages lists the module's packages: those the wpg binary links
// and every other one (helpers, future servers).
func modulePackages(t *testing.T) []goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Name,Dir", "-deps", module+"/cmd/wpg", module+"/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	var pkgs []goPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		if (p.ImportPath == module || strings.HasPrefix(p.ImportPath, module+"/")) && !seen[p.ImportPath] {
			seen[p.ImportPath] = true
			pkgs = append(pkgs, p)
		}
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages of %s", len(pkgs), module)
	}
	return pkgs
}

type violation struct{ what, pos string }

// stdioFDCalls are the functions that take a file descriptor first: one
// called with 0, 1 or 2 uses a standard stream by number.
var stdioFDCalls = map[string]bool{
	"NewFile": true, "IsPipe": true, "PipeSize": true, "SetPipeSize": true, "Write": true, "Read": true,
	"Writev": true, "Readv": true, "Dup": true, "Dup2": true, "Dup3": true, "Fstat": true, "Close": true,
	"Splice": true, "Vmsplice": true, "Tee": true, "SetNonblock": true, "FcntlInt": true, "IoctlGetTermios": true,
}

// stdioPaths are the file names that open a standard stream.
var stdioPaths = map[string]bool{
	"/dev/stdin": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true,
	"/dev/fd/0": true, "/dev/fd/1": true, "/dev/fd/2": true,
	"/proc/self/fd/0": true, "/proc/self/fd/1": true, "/proc/self/fd/2": true,
}

func scanQuiet(t *testing.T, file string) []violation {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	names := map[string]string{} // local name → import path
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		name := filepath.Base(path)
		if path == "golang.org/x/sys/unix" {
			name = "unix"
		}
		if im.Name != nil {
			name = im.Name.Name
		}
		names[name] = path
	}
	var out []violation
	pos := func(n ast.Node) string {
		p := fset.Position(n.Pos())
		return fmt.Sprintf("%s:%d", filepath.Base(p.Filename), p.Line)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			id, ok := n.X.(*ast.Ident)
			if !ok {
				return true
			}
			path := names[id.Name]
			if why, ok := forbidden[path][n.Sel.Name]; ok && why != "" {
				out = append(out, violation{id.Name + "." + n.Sel.Name, pos(n)})
			}
		case *ast.CallExpr:
			var fn string
			switch f := n.Fun.(type) {
			case *ast.Ident:
				if f.Name == "print" || f.Name == "println" {
					out = append(out, violation{"builtin " + f.Name, pos(n)})
				}
				fn = f.Name
			case *ast.SelectorExpr:
				fn = f.Sel.Name
			}
			args := n.Args
			if fn == "Dup2" || fn == "Dup3" {
				args = args[min(1, len(args)):] // the new descriptor
			}
			if stdioFDCalls[fn] && len(args) > 0 {
				if lit, ok := args[0].(*ast.BasicLit); ok && lit.Kind == token.INT && (lit.Value == "0" || lit.Value == "1" || lit.Value == "2") {
					out = append(out, violation{"stdio fd 0/1/2 (" + fn + ")", pos(n)})
				}
			}
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				if v, err := strconv.Unquote(n.Value); err == nil && stdioPaths[v] {
					out = append(out, violation{"stdio path " + v, pos(n)})
				}
			}
		}
		return true
	})
	return out
}

// TestQuietScanSeesViolations checks the scanner itself on a file with
// one of each violation and on one with none.
func TestQuietScanSeesViolations(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.go")
	if err := os.WriteFile(bad, []byte(`package bad

import (
	"fmt"
	stdlog "log"
	"log/slog"
	"os"
	"golang.org/x/sys/unix"
)

func f() {
	fmt.Println("x")
	fmt.Fprintln(os.Stderr, "y")
	stdlog.Fatal("z")
	slog.Info("w")
	_ = os.Getenv("HOME")
	_, _ = os.LookupEnv("HOME")
	unix.Write(1, nil)
	os.NewFile(2, "stderr")
	unix.Dup2(5, 1)
	os.Open("/dev/stdout")
	println("v")
	os.Exit(3)
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range scanQuiet(t, bad) {
		got = append(got, v.what)
	}
	want := "fmt.Println os.Stderr stdlog.Fatal slog.Info os.Getenv os.LookupEnv stdio fd 0/1/2 (Write) stdio fd 0/1/2 (NewFile) stdio fd 0/1/2 (Dup2) stdio path /dev/stdout builtin println os.Exit"
	if strings.Join(got, " ") != want {
		t.Errorf("scan found\n  %s\nwant\n  %s", strings.Join(got, " "), want)
	}
	good := filepath.Join(dir, "good.go")
	if err := os.WriteFile(good, []byte(`package good

import (
	"fmt"
	"io"
	"os"
)

func f(w io.Writer, fd int) {
	fmt.Fprintln(w, "x")
	_, _ = os.Open("/etc/hostname")
	_ = os.NewFile(uintptr(fd), "")
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if v := scanQuiet(t, good); len(v) != 0 {
		t.Errorf("scan of a clean file found %v", v)
	}
}
