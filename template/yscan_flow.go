package template

import "strings"

// Flow collections.

// flow reads a flow mapping or sequence, in a block whose indentation is
// pi (its lines after the first must be indented more).
func (s *yscan) flow(pi int) (*ynode, int64) {
	items := s.ch() == '[' && s.takeStreams()
	n, closer := s.flowOpen(items)
	s.fspace(pi)
	if s.ch() == closer {
		s.pos++
		s.endFlow(n)
		s.seqDone = s.seqDone || items
		return n, 1
	}
	cnt := int64(1)
	if n.kind == yMapping {
		cnt += s.flowPairs(n, pi)
	} else {
		cnt += s.flowEntries(n, pi, items)
	}
	s.pos++
	s.endFlow(n)
	if items {
		s.seqDone = true
	}
	return n, s.count(cnt, int(n.line), int(n.col))
}

// flowOpen begins the flow collection whose bracket is at pos (items:
// the streams sequence, handed on item by item) and returns it and its
// closing bracket, pos after the opening one.
func (s *yscan) flowOpen(items bool) (*ynode, byte) {
	s.streams = false
	open := s.ch()
	n := s.a.alloc()
	n.kind, n.flags = ySequence, yFlow
	closer := byte(']')
	if open == '{' {
		n.kind, closer = yMapping, '}'
	}
	n.line, n.col = int32(s.line), int32(s.col(s.pos))
	if s.depth == 0 {
		s.top, s.topFlow = n, true
	}
	if items {
		s.seq, s.seqFlow = n, true
	}
	s.depth++
	if n.kind == yMapping {
		s.flowMaps++
	}
	s.pos++
	return n, closer
}

// flowPairs reads the "key: value" entries of flow mapping m, up to its
// closing brace, and returns their count.
func (s *yscan) flowPairs(m *ynode, pi int) int64 {
	var cnt int64
	var tail *ynode
	for {
		k := s.scalar(true)
		if s.ch() != ':' {
			s.unsup("a flow mapping entry that is not key: value")
		}
		s.checkKey(k)
		colonLine, colonCol := s.line, s.col(s.pos)
		s.pos++
		if c := s.ch(); c != ' ' && c != '\n' {
			s.unsup("a colon followed by more than a blank")
		}
		s.fspace(pi)
		if c := s.ch(); c == ',' || c == '}' {
			s.unsup("a flow mapping entry without a value")
		}
		s.streams = s.depth == 1 && k.text == "streams"
		v, vc := s.fvalue(pi)
		if b := s.at(s.pos + 1); v.kind == yAlias && s.ch() == ',' && b != ' ' && b != '\n' {
			s.unsup("an alias right before a comma and a key in a flow mapping")
		}
		s.streams = false
		s.pair(m, &tail, k, v)
		cnt += s.count(2+vc, colonLine, colonCol)
		if !s.flowNext('}', pi) {
			return cnt
		}
	}
}

// flowEntries reads the entries of flow sequence sq, up to its closing
// bracket, and returns their count; those of the streams sequence (items)
// go to the item handler one by one.
func (s *yscan) flowEntries(sq *ynode, pi int, items bool) int64 {
	var cnt int64
	var tail *ynode
	for {
		var v *ynode
		var vc int64
		if items {
			v, vc = s.streamItem(s.pos, s.line, func() (*ynode, int64) {
				v, c := s.fvalue(pi)
				s.fspace(pi)
				if c := s.ch(); c != ',' && c != ']' {
					s.unsup("a flow sequence's entries not separated by commas")
				}
				return v, c
			}, func() { s.skipFlowItem() })
		} else {
			v, vc = s.fvalue(pi)
			s.fspace(pi)
			if s.ch() == ':' {
				s.unsup("a mapping entry in a flow sequence")
			}
			if s.flowMaps > 0 && v.kind == yScalar && v.flags&yQuoted == 0 && strings.Contains(v.text, ":") {
				// go-yaml reads 2001:2::1 in [...] in {...} as a
				// mapping of 2001 to 2::1.
				s.unsup("a plain scalar with a colon in a flow sequence in a flow mapping")
			}
		}
		if v != nil {
			sq.add(&tail, v)
		}
		sq.n++
		cnt += vc
		if !s.flowNext(']', pi) {
			return cnt
		}
	}
}

// flowNext steps past the comma after a flow collection's entry and
// reports whether another entry follows it; false: pos is at the
// collection's closing bracket.
func (s *yscan) flowNext(closer byte, pi int) bool {
	s.fspace(pi)
	switch s.ch() {
	case ',':
		s.pos++
		s.fspace(pi)
		if s.ch() == closer {
			s.unsup("a comma before the closing bracket")
		}
		return true
	case closer:
		return false
	}
	s.unsup("a flow collection's entries not separated by commas")
	return false
}

// endFlow closes flow collection n.
func (s *yscan) endFlow(n *ynode) {
	s.depth--
	if n.kind == yMapping {
		s.flowMaps--
	}
}

// fspace skips blanks, line feeds and comments inside a flow collection.
func (s *yscan) fspace(pi int) {
	for {
		sp := s.spaces()
		switch s.ch() {
		case '\n':
			s.nl()
			for s.ch() == ' ' {
				s.pos++
			}
			if c := s.ch(); c != '\n' && c != '#' && c != '\t' && !s.eof() && s.col(s.pos) <= pi {
				s.unsup("a flow collection's line indented no more than its block")
			}
			continue
		case '#':
			if sp || s.pos == s.lineStart {
				s.comment()
				continue
			}
		}
		if s.eof() {
			s.unsup("the end inside a flow collection")
		}
		return
	}
}

// fvalue reads a value inside a flow collection.
func (s *yscan) fvalue(pi int) (*ynode, int64) {
	switch s.ch() {
	case '&':
		name, an, ampLine, ampCol := s.anchorName()
		if c := s.ch(); c != ' ' {
			s.unsup("an anchor name followed by more than a blank")
		}
		s.fspace(pi)
		if c := s.ch(); c == '&' || c == '*' || c == ',' || c == ']' || c == '}' {
			s.unsup("an anchor on nothing, an alias or an anchor")
		}
		v, c := s.fvalue(pi)
		if v.kind == yScalar && v.flags&yQuoted == 0 && strings.Contains(v.text, ":") {
			s.unsup("an anchored plain scalar with a colon in a flow collection")
		}
		return s.anchor(name, an, v, c, ampLine, ampCol)
	case '*':
		return s.alias()
	case '[', '{':
		return s.flow(pi)
	}
	n := s.scalar(true)
	if n.flags&yMerge != 0 {
		s.unsup("a merge key as a value")
	}
	return n, 1
}
