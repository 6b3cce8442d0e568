package template

import "strings"

// Positions.

func (s *yscan) eof() bool { return s.pos >= len(s.src) }

// ch is the byte at pos, 0 at the end.
func (s *yscan) ch() byte {
	if s.pos < len(s.src) {
		return s.src[s.pos]
	}
	return 0
}

func (s *yscan) at(i int) byte {
	if i < len(s.src) {
		return s.src[i]
	}
	return 0
}

// nl steps over the line feed at pos.
func (s *yscan) nl() {
	s.pos++
	s.line++
	s.lineStart = s.pos
}

// col is the 1-based column of offset pos on the current line, in
// characters as go-yaml counts them.
func (s *yscan) col(pos int) int {
	if pos < s.colPos || s.colPos < s.lineStart {
		s.colPos, s.colAdj = s.lineStart, 0
	}
	for i := s.colPos; i < pos; i++ {
		if s.src[i]&0xc0 == 0x80 {
			s.colAdj++
		}
	}
	s.colPos = pos
	return pos - s.lineStart - s.colAdj + 1
}

func (s *yscan) place(n *ynode, pos int) {
	n.line, n.col = int32(s.line), int32(s.col(pos))
}

// count adds c values and notes where the count first passed the limit
// (checkExpansion's rule: the first value, in the order values end,
// whose own count is above it).
func (s *yscan) count(c int64, line, col int) int64 {
	if c > s.maxValues && !s.over {
		s.over, s.overLine, s.overCol = true, line, col
	}
	return min(c, s.maxValues+1)
}

// Blanks and comments.

// spaces skips blanks on the line and says whether there were any.
func (s *yscan) spaces() bool {
	st := s.pos
	for s.pos < len(s.src) && s.src[s.pos] == ' ' {
		s.pos++
	}
	if s.ch() == '\t' {
		s.unsup("a tab")
	}
	return s.pos > st
}

// comment skips a comment to the end of its line.
func (s *yscan) comment() {
	if i := strings.IndexByte(s.src[s.pos:], '\n'); i >= 0 {
		s.pos += i
	} else {
		s.pos = len(s.src)
	}
}

// eol ends the line after a value: blanks, a comment, the line feed.
func (s *yscan) eol() {
	if !s.lineEnds() {
		s.unsup("more after a value on its line")
	}
}

// lineEnds reports whether no more than blanks and a comment are left on
// the line, and if so steps past its line feed.
func (s *yscan) lineEnds() bool {
	sp := s.spaces()
	if !s.eof() && s.ch() != '\n' && (s.ch() != '#' || !sp) {
		return false
	}
	if s.ch() == '#' {
		s.comment()
	}
	if !s.eof() {
		s.nl()
	}
	return true
}

// blank skips blank and comment lines from the start of a line (or
// stays at content already reached) and returns the column of the
// content it stops at, 0 at the end.
func (s *yscan) blank() int {
	for {
		for s.pos < len(s.src) && s.src[s.pos] == ' ' {
			s.pos++
		}
		switch s.ch() {
		case '\t':
			s.unsup("a tab in the indentation")
		case '\n':
			s.nl()
			continue
		case '#':
			s.comment()
			continue
		}
		if s.eof() {
			return 0
		}
		return s.col(s.pos)
	}
}

// marker reports whether a document marker (--- or ...) is at pos.
func (s *yscan) marker(m string) bool {
	if !strings.HasPrefix(s.src[s.pos:], m) {
		return false
	}
	c := s.at(s.pos + 3)
	return s.pos+3 == len(s.src) || c == ' ' || c == '\n'
}

// entry reports whether a block sequence entry ("- ") starts at pos.
func (s *yscan) entry() bool {
	if s.ch() != '-' {
		return false
	}
	c := s.at(s.pos + 1)
	return s.pos+1 == len(s.src) || c == ' ' || c == '\n'
}
