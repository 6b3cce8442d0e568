package vm

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Result is what a boot reported.
type Result struct {
	// Console is the whole serial console output.
	Console string
	// Programs are the programs' results in order; a program the guest
	// never finished has Finished false.
	Programs []ProgramResult
	// Modules lists the modules the guest loaded.
	Modules []string
	// Done is true when the guest init reached its end and powered off.
	Done bool
	// Wall is the time from QEMU's start to its exit.
	Wall time.Duration
	// EarlyDeaths holds the console tails of boots whose kernel died
	// before the init's first line (Run then boots again): under TCG on a
	// loaded host the guest kernel has oopsed in its timer interrupt
	// during its own initcalls, before anything of the test ran.
	EarlyDeaths []string
}

// ProgramResult is one program's exit status, output and, for Go test
// binaries run with -test.v, each test's result.
type ProgramResult struct {
	Name     string
	Finished bool
	ExitCode int
	Output   string
	Tests    []TestResult
}

// TestResult is one "--- PASS|FAIL|SKIP: Name (1.23s)" line of go test -v.
type TestResult struct {
	Name    string
	Outcome string // PASS, FAIL or SKIP
	Seconds float64
}

// Passed reports whether the program ran to its end and exited 0.
func (p ProgramResult) Passed() bool { return p.Finished && p.ExitCode == 0 }

// Program returns the result of the program called name, or nil.
func (r *Result) Program(name string) *ProgramResult {
	for i := range r.Programs {
		if r.Programs[i].Name == name {
			return &r.Programs[i]
		}
	}
	return nil
}

// EarlyDeathsOrNil returns r.EarlyDeaths, nil for a nil r (a Run that
// failed before booting).
func (r *Result) EarlyDeathsOrNil() []string {
	if r == nil {
		return nil
	}
	return r.EarlyDeaths
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

var testLine = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (\S+) \(([0-9.]+)s\)`)

// Parse reads a guest console: the init's WPGVM lines, each program's
// output between its BEGIN and END lines, and the go test -v result lines
// in it.
func Parse(console string) *Result {
	res := &Result{Console: console}
	var cur *ProgramResult
	var out strings.Builder
	for _, line := range strings.Split(strings.ReplaceAll(console, "\r", ""), "\n") {
		if i := strings.Index(line, linePrefix); i >= 0 {
			msg := line[i+len(linePrefix):]
			switch {
			case strings.HasPrefix(msg, lineBegin):
				res.Programs = append(res.Programs, ProgramResult{Name: strings.TrimSpace(msg[len(lineBegin):])})
				cur = &res.Programs[len(res.Programs)-1]
				out.Reset()
				continue
			case strings.HasPrefix(msg, lineEnd) && cur != nil:
				f := strings.Fields(msg[len(lineEnd):])
				if len(f) == 2 {
					code, _ := strconv.Atoi(strings.TrimPrefix(f[1], "rc="))
					cur.ExitCode, cur.Finished = code, true
				}
				cur.Output = out.String()
				cur = nil
				continue
			case strings.HasPrefix(msg, lineModule):
				res.Modules = append(res.Modules, strings.TrimSpace(msg[len(lineModule):]))
				continue
			case strings.TrimSpace(msg) == lineDone:
				res.Done = true
				continue
			}
		}
		if cur != nil {
			out.WriteString(line)
			out.WriteByte('\n')
			if m := testLine.FindStringSubmatch(line); m != nil {
				secs, _ := strconv.ParseFloat(m[3], 64)
				cur.Tests = append(cur.Tests, TestResult{Name: m[2], Outcome: m[1], Seconds: secs})
			}
		}
	}
	if cur != nil {
		cur.Output = out.String()
	}
	return res
}
