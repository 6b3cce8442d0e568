package template

import (
	"fmt"
	"strings"

	"github.com/wpg-dev/wpg/internal/printable"
)

// Error is a template error: where (file, line, column, field path), what,
// and how to fix it. Error() is one line:
//
//	mixed.wpg.yaml:12:9: streams[1].ipv4.src: "2001:db8::1" is an IPv6 address in an IPv4 field; use an IPv4 address such as 198.18.0.1
type Error struct {
	File      string
	Line, Col int    // 1-based; 0 when unknown
	Path      string // e.g. streams[1].ipv4.src
	Msg       string // what is wrong
	Remedy    string // how to fix it (may be empty; see Fix)
	Err       error  // underlying error (YAML syntax), if any
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteByte(':')
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:%d:", e.Line, e.Col)
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Remedy != "" {
		b.WriteString("; ")
		b.WriteString(e.Remedy)
	}
	// File names, keys and values come from the user: no control
	// character reaches the terminal.
	return printable.Escape(b.String())
}

// Fix is how to fix it (Remedy): with one, the error is an
// inputerr.Fixer, its text naming the remedy.
func (e *Error) Fix() string { return e.Remedy }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }
