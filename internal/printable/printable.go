// Package printable makes user-provided text (stream names, file paths,
// values echoed in errors) safe to print on a terminal: control characters
// and invalid UTF-8 are written as escapes, everything else is unchanged.
// Every human output that prints such text goes through Escape; JSON
// output does not need it (encoding/json escapes on its own).
package printable

import (
	"io/fs"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every control character (C0, DEL, C1, and the
// Unicode format characters that reorder or hide text, such as U+202E) and
// every byte of invalid UTF-8 replaced by a Go-style escape: \t, \n, \r,
// \a, \x1b, \x00, \u202e, …; a backslash stays a single backslash, so
// ordinary names and Windows-looking paths print as written. Printable
// text, including non-ASCII letters, comes back unchanged (and without
// an allocation).
func Escape(s string) string {
	if !needs(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case bad(r):
			q := strconv.QuoteRuneToASCII(r) // '\x1b', '\u202e', '\t'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// needs reports whether s has anything Escape would change.
func needs(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || bad(r) {
			return true
		}
		i += n
	}
	return false
}

// bad reports whether r must not reach a terminal as is.
func bad(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// FileKind names, for an error, the type of a file that is not a regular
// one: "a directory", "a named pipe", "a character device", rather than
// fs.FileMode's "d---------".
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file (" + m.Type().String() + ")"
}
