package template

// Anchors, aliases and merge keys.

// anchored reads &name and the value it marks.
func (s *yscan) anchored(pi, ctx int) (*ynode, int64) {
	name, an, ampLine, ampCol := s.anchorName()
	var v *ynode
	var c int64
	// After the name, a blank or the line's end (name).
	if s.lineEnds() {
		if ind := s.blank(); s.eof() || ind <= pi {
			s.unsup("an anchor without a value")
		}
		v, c = s.value(pi, ctxLine)
	} else {
		v, c = s.value(pi, ctxValue)
	}
	return s.anchor(name, an, v, c, ampLine, ampCol)
}

// anchorName reads &name and registers the anchor as being read; it
// returns the name, the anchor and where its & is.
func (s *yscan) anchorName() (string, *yanchor, int, int) {
	s.streams = false
	line, col := s.line, s.col(s.pos)
	s.pos++
	name := s.name(false)
	if _, dup := s.anchors[name]; dup {
		s.unsup("an anchor defined twice")
	}
	an := &yanchor{building: true, item: s.cur}
	s.anchors[name] = an
	if s.cur >= 0 {
		s.curAnchors = append(s.curAnchors, name)
	}
	return name, an, line, col
}

// anchor marks v, read after &name at ampLine:ampCol, as the anchor's.
func (s *yscan) anchor(name string, an *yanchor, v *ynode, c int64, ampLine, ampCol int) (*ynode, int64) {
	if v.kind == yAlias || v.flags&yAnchored != 0 {
		s.unsup("an anchor on an alias or anchor")
	}
	v.flags |= yAnchored
	an.node, an.count, an.building = v, c, false
	return v, s.count(1+c, ampLine, ampCol)
}

// alias reads *name.
func (s *yscan) alias() (*ynode, int64) {
	s.streams = false
	star := s.pos
	s.pos++
	name := s.name(true)
	an := s.anchors[name]
	switch {
	case an == nil:
		s.pos = star
		s.unsup("an alias of an anchor not defined before it")
	case an.building:
		s.pos = star
		s.unsup("an alias inside its own anchor")
	case an.node == nil:
		s.pos = star
		s.unsup("an alias of an anchor in a stream read by go-yaml")
	}
	if an.item >= 0 && an.item != s.cur {
		s.deps = append(s.deps, an.item)
	}
	n := s.a.alloc()
	n.kind, n.text, n.first = yAlias, name, an.node
	s.place(n, star)
	return n, s.count(1+an.count, int(n.line), int(n.col))
}

// name reads an anchor's or alias's name.
func (s *yscan) name(alias bool) string {
	st := s.pos
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			s.pos++
			continue
		}
		break
	}
	if s.pos == st || s.pos-st > 128 || s.src[st] == '-' {
		s.unsup("an anchor name")
	}
	switch c := s.ch(); {
	case s.eof(), c == ' ', c == '\n':
	case alias && (c == ',' || c == ']' || c == '}'):
	default:
		s.unsup("an anchor name")
	}
	return s.src[st:s.pos]
}

// checkMerge refuses a merge key whose value is not a mapping or a list
// of mappings (go-yaml's decoder refuses them wherever they are).
func (s *yscan) checkMerge(k, v *ynode) {
	if k.flags&yMerge == 0 {
		return
	}
	switch v := v.deref(); v.kind {
	case yMapping:
		return
	case ySequence:
		ok := true
		for _, e := range v.items() {
			ok = ok && e.kind == yMapping
		}
		if ok {
			return
		}
	}
	s.unsup("a merge key of something other than mappings")
}
