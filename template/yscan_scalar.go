package template

import (
	"strings"
	"unicode/utf8"
)

// Scalars.

// plainStart and plainByte say which ASCII bytes may start and continue
// a plain scalar the scanner takes; others (YAML's indicators and what
// go-yaml reads in ways of its own) stop it.
var plainStart, plainByte [128]bool

func init() {
	for c := byte(0); c < 128; c++ {
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		plainStart[c] = alnum || strings.IndexByte("._/+~(", c) >= 0
		plainByte[c] = alnum || strings.IndexByte("._/+~()-:=", c) >= 0
	}
}

// scalar reads a plain or quoted scalar (a key or a value) and leaves pos
// after it (before any blanks that follow a plain one).
func (s *yscan) scalar(flow bool) *ynode {
	s.streams = false
	if s.pos == s.lineStart && (s.marker("---") || s.marker("...")) {
		s.unsup("a document marker")
	}
	n := s.a.alloc()
	s.place(n, s.pos)
	switch c := s.ch(); {
	case c == '"' || c == '\'':
		n.text, n.flags = s.quoted(c), yQuoted
		s.afterQuoted(flow)
		return n
	case c == '<' && strings.HasPrefix(s.src[s.pos:], "<<:"):
		if c := s.at(s.pos + 3); s.pos+3 < len(s.src) && c != ' ' && c != '\n' {
			s.unsup("a plain scalar starting with <<")
		}
		s.pos += 2
		n.text, n.flags = "<<", yMerge
		return n
	case c == '-' && s.pos+1 < len(s.src) && s.src[s.pos+1] != ' ' && s.src[s.pos+1] != '\n':
	case c >= 0x80:
	case c < 0x80 && plainStart[c]:
	default:
		s.unsup("a scalar starting with an indicator")
	}
	n.text = s.plain(n, flow)
	if strings.HasSuffix(n.text, ":") {
		s.unsup("a plain scalar ending with a colon")
	}
	if len(n.text) > 1024 && s.ch() == ':' {
		s.unsup("a key longer than 1024 characters")
	}
	switch n.text {
	case "~", "null", "Null", "NULL":
		n.flags |= yNull
	}
	return n
}

// plain reads the text of a plain scalar from pos, its start checked
// (scalar), and leaves pos after it; n.col moves as go-yaml moves it.
func (s *yscan) plain(n *ynode, flow bool) string {
	st := s.pos
	end := st
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case c == '\n':
			return s.src[st:end]
		case c == ' ':
			j := s.pos
			for j < len(s.src) && s.src[j] == ' ' {
				j++
			}
			if j == len(s.src) {
				return s.src[st:end]
			}
			switch b := s.src[j]; {
			case b == '\n':
				// go-yaml puts a plain scalar that blanks end on its
				// line as many columns further as there are blanks.
				n.col += int32(j - s.pos)
				return s.src[st:end]
			case b == '#':
				return s.src[st:end]
			case b == '\t':
				s.unsup("a tab")
			case flow && (b == ',' || b == ']' || b == '}'):
				return s.src[st:end]
			case b == ':':
				s.unsup("a blank before a colon")
			}
			s.pos = j
			continue
		case c == ':':
			b := s.at(s.pos + 1)
			if s.pos+1 == len(s.src) || b == ' ' || b == '\n' {
				return s.src[st:end]
			}
			if flow && (b == ',' || b == ']' || b == '}' || b == '[' || b == '{') {
				s.unsup("a colon before a flow indicator")
			}
			s.pos++
		case flow && (c == ',' || c == ']' || c == '}'):
			return s.src[st:end]
		case flow && (c == '[' || c == '{'):
			s.unsup("a bracket in a plain scalar")
		case c >= 0x80:
			_, w := utf8.DecodeRuneInString(s.src[s.pos:])
			s.pos += w
		case plainByte[c]:
			s.pos++
		default:
			s.unsup("a character the scanner does not take in a plain scalar")
		}
		end = s.pos
	}
	return s.src[st:end]
}

// afterQuoted checks what may follow a quoted scalar on its line.
func (s *yscan) afterQuoted(flow bool) {
	switch c := s.ch(); {
	case s.eof(), c == ' ', c == '\n':
	case c == ':':
		if b := s.at(s.pos + 1); s.pos+1 < len(s.src) && b != ' ' && b != '\n' {
			s.unsup("a colon after a quoted key followed by more than a blank")
		}
	case flow && (c == ',' || c == ']' || c == '}'):
	default:
		s.unsup("more right after a quoted scalar")
	}
}

// quoted reads a scalar in quotes q (' or ") on one line: its value, as
// go-yaml's token holds it (in double quotes, the escapes go-yaml takes;
// in single quotes, a quote written twice is one).
func (s *yscan) quoted(q byte) string {
	s.pos++
	st := s.pos
	var buf []byte // the value once an escape is met
	start := func() {
		if buf == nil {
			buf = append(make([]byte, 0, s.pos-st+16), s.src[st:s.pos]...)
		}
	}
	for {
		if s.eof() {
			s.unsup("the end inside a quoted scalar")
		}
		c := s.src[s.pos]
		switch {
		case c == '\'' && q == '\'' && s.at(s.pos+1) == '\'':
			start()
			buf = append(buf, '\'')
			s.pos += 2
			continue
		case c == q:
			v := s.src[st:s.pos]
			if buf != nil {
				v = string(buf)
			}
			s.pos++
			return v
		case c == '\n':
			s.unsup("a quoted scalar over more than one line")
		case c == '\t':
			s.unsup("a tab in a quoted scalar")
		case c == '\\' && q == '"':
			start()
			buf = s.escape(buf)
			continue
		}
		if buf != nil {
			buf = append(buf, c)
		}
		s.pos++
	}
}

// escape appends the character the escape at pos stands for.
func (s *yscan) escape(buf []byte) []byte {
	e := s.at(s.pos + 1)
	s.pos += 2
	if r, ok := map[byte]rune{'0': 0, 'a': 7, 'b': 8, 't': 9, 'n': 10, 'v': 11, 'f': 12, 'r': 13, 'e': 0x1b,
		' ': ' ', '"': '"', '/': '/', '\\': '\\', 'N': 0x85, '_': 0xa0, 'L': 0x2028, 'P': 0x2029}[e]; ok {
		return utf8.AppendRune(buf, r)
	}
	digits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
	if digits == 0 || s.pos+digits > len(s.src) {
		s.pos -= 2
		s.unsup("an escape the scanner does not take")
	}
	r := rune(0)
	for _, h := range []byte(s.src[s.pos : s.pos+digits]) {
		switch {
		case h >= '0' && h <= '9':
			r = r<<4 | rune(h-'0')
		case h >= 'a' && h <= 'f':
			r = r<<4 | rune(h-'a'+10)
		case h >= 'A' && h <= 'F':
			r = r<<4 | rune(h-'A'+10)
		default:
			s.unsup("an escape with a character that is not hex")
		}
	}
	if r >= 0xd800 && r <= 0xdfff || r > utf8.MaxRune {
		s.unsup("an escape of a surrogate or beyond Unicode")
	}
	s.pos += digits
	return utf8.AppendRune(buf, r)
}
