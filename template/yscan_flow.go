package template

import "strings"

// Flow collections.

// flow reads a flow mapping or sequence, in a block whose indentation is
// pi (its lines after the first must be indented more).
func (s *yscan) flow(pi int) (*ynode, int64) {
	items := s.ch() == '[' && s.takeStreams()
	s.streams = false
	open := s.ch()
	n := s.a.alloc()
	n.kind, n.flags = ySequence, yFlow
	closer := byte(']')
	if open == '{' {
		n.kind, closer = yMapping, '}'
	}
	bl, bc := s.line, s.col(s.pos)
	n.line, n.col = int32(bl), int32(bc)
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
	s.fspace(pi)
	cnt := int64(1)
	if s.ch() == closer {
		s.pos++
		s.endFlow(n)
		s.seqDone = s.seqDone || items
		return n, 1
	}
	var tail *ynode
	for {
		if n.kind == yMapping {
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
			s.pair(n, &tail, k, v)
			cnt += s.count(2+vc, colonLine, colonCol)
		} else {
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
				n.add(&tail, v)
			}
			n.n++
			cnt += vc
		}
		s.fspace(pi)
		switch s.ch() {
		case ',':
			s.pos++
			s.fspace(pi)
			if s.ch() == closer {
				s.unsup("a comma before the closing bracket")
			}
			continue
		case closer:
			s.pos++
			s.endFlow(n)
			if items {
				s.seqDone = true
			}
			return n, s.count(cnt, bl, bc)
		}
		s.unsup("a flow collection's entries not separated by commas")
	}
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
