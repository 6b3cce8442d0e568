package template

import "strings"

// Block collections.

// blockMap reads a block mapping at column c whose first key, k, has been
// read (pos at its colon).
func (s *yscan) blockMap(c int, k *ynode) (*ynode, int64) {
	m := s.a.alloc()
	m.kind = yMapping
	m.line, m.col = k.line, k.col
	firstLine, firstCol := s.line, s.col(s.pos)
	if s.depth == 0 {
		s.top = m
	}
	s.depth++
	cnt := int64(1)
	var tail *ynode
	for {
		s.checkKey(k)
		colonLine, colonCol := s.line, s.col(s.pos)
		s.pos++
		s.streams = s.depth == 1 && k.text == "streams"
		v, vc := s.mapValue(c, colonCol)
		s.streams = false
		s.pair(m, &tail, k, v)
		cnt += s.count(2+vc, colonLine, colonCol)
		ind := s.blank()
		if s.eof() || ind < c {
			break
		}
		if ind > c {
			s.unsup("a line indented more than its mapping's keys")
		}
		k = s.scalar(false)
		if s.ch() != ':' {
			s.unsup("a mapping entry that is not key: value")
		}
	}
	s.depth--
	return m, s.count(cnt, firstLine, firstCol)
}

// checkKey refuses keys the scanner does not take: go-yaml finds
// repeated keys by a path in which . $ * [ ] are special, reads keys with
// a colon its own way, and wpg reads keys without their blanks.
func (s *yscan) checkKey(k *ynode) {
	if strings.ContainsAny(k.text, ".$*[]:") || k.text == "" || k.flags&yNull != 0 || strings.TrimSpace(k.text) != k.text {
		s.unsup("a key with . $ * [ or ]")
	}
}

// mapValue reads the value after a block mapping's "key:", the key at
// column c and its colon at colonCol.
func (s *yscan) mapValue(c, colonCol int) (*ynode, int64) {
	line := s.line
	// After the colon, a blank or the line's end (scalar, afterQuoted).
	if s.lineEnds() {
		ind := s.blank()
		switch {
		case s.eof():
		case ind > c:
			return s.value(c, ctxLine)
		case ind == c && s.entry():
			return s.blockSeq(ind)
		}
		// No value: null, where go-yaml puts it: after the colon, one
		// more at the document's end.
		n := s.a.alloc()
		n.text, n.flags = "null", yNull
		n.line, n.col = int32(line), int32(colonCol+1)
		if s.eof() {
			n.col++
		}
		return n, 1
	}
	return s.value(c, ctxValue)
}

// pair adds key k and value v to mapping m, whose last value is *tail.
func (s *yscan) pair(m *ynode, tail **ynode, k, v *ynode) {
	s.dupKey(m, k)
	s.checkMerge(k, v)
	m.add(tail, k)
	m.add(tail, v)
	m.n++
}

// dupKey refuses a key already in m (go-yaml's "already defined").
func (s *yscan) dupKey(m, k *ynode) {
	if m.n > 64 {
		// A long mapping (an IMIX of many sizes): the keys are few in
		// templates; a map would cost more than it saves below this.
		if s.keySet == nil || s.keySetOf != m {
			s.keySet, s.keySetOf = make(map[string]struct{}, m.n*2), m
			for x := m.first; x != nil && x.next != nil; x = x.next.next {
				s.keySet[x.text] = struct{}{}
			}
		}
		if _, dup := s.keySet[k.text]; dup {
			s.unsup("a key defined twice")
		}
		s.keySet[k.text] = struct{}{}
		return
	}
	for x := m.first; x != nil && x.next != nil; x = x.next.next {
		if x.text == k.text {
			s.unsup("a key defined twice")
		}
	}
}

// blockSeq reads a block sequence whose dashes are at column c.
func (s *yscan) blockSeq(c int) (*ynode, int64) {
	items := s.takeStreams()
	sq := s.a.alloc()
	sq.kind = ySequence
	s.place(sq, s.pos)
	if s.depth == 0 {
		s.top = sq
	}
	if items {
		s.seq = sq
	}
	s.depth++
	cnt := int64(1)
	var tail *ynode
	for {
		start, startLine := s.pos, s.line
		var it *ynode
		var ic int64
		if items {
			it, ic = s.streamItem(start, startLine, func() (*ynode, int64) {
				s.pos++
				n, ic := s.entryValue(c)
				if ind := s.blank(); !s.eof() && ind > c {
					// More of the item, which the scanner did not take.
					s.unsup("a line indented more than its sequence's dashes")
				}
				return n, ic
			}, func() { s.skipBlockItem(c) })
		} else {
			s.pos++
			it, ic = s.entryValue(c)
		}
		if it != nil {
			sq.add(&tail, it)
		}
		sq.n++
		cnt += ic
		ind := s.blank()
		if s.eof() || ind < c {
			break
		}
		if ind > c {
			s.unsup("a line indented more than its sequence's dashes")
		}
		if !s.entry() {
			break
		}
	}
	s.depth--
	if items {
		s.seqDone = true
	}
	return sq, s.count(cnt, int(sq.line), int(sq.col))
}

// entryValue reads what follows a block sequence's dash (pos after it).
func (s *yscan) entryValue(c int) (*ynode, int64) {
	// After the dash, a blank or the line's end (entry).
	if s.lineEnds() {
		if ind := s.blank(); !s.eof() && ind > c {
			return s.value(c, ctxLine)
		}
		s.unsup("an empty sequence entry")
	}
	return s.value(c, ctxEntry)
}
