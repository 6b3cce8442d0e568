package template

import "strings"

// Streams items.

// takeStreams reports whether the sequence starting at pos is the root's
// streams value (and whether there is a handler for its items).
func (s *yscan) takeStreams() bool {
	t := s.streams && s.item != nil
	s.streams = false
	return t
}

// streamItem reads one item of the streams sequence with parse, hands it
// to the item handler and takes its nodes back (unless it defines an
// anchor, which later items may name). An item the scanner does not take
// is skipped over with skip and handed on with the reason: the handler
// reads it otherwise (parse.go). Items are not linked into the sequence.
func (s *yscan) streamItem(start, startLine int, parse func() (*ynode, int64), skip func()) (*ynode, int64) {
	it := &s.it // one for all items: the handler keeps none
	*it = yitem{k: s.nitems, start: start, startLine: startLine, deps: it.deps[:0]}
	s.nitems++
	s.cur, s.curAnchors, s.deps = it.k, s.curAnchors[:0], s.deps[:0]
	depth, flowMaps := s.depth, s.flowMaps
	mark := s.a.mark()
	n, c, u := s.try(parse)
	if u != nil {
		// From the item's start again, past it as a whole; its anchors,
		// those read and those not, are go-yaml's to resolve.
		s.depth, s.flowMaps, s.keySetOf = depth, flowMaps, nil
		s.pos, s.line, s.lineStart = start, startLine, strings.LastIndexByte(s.src[:start], '\n')+1
		skip()
		for _, name := range s.curAnchors {
			*s.anchors[name] = yanchor{item: it.k}
		}
		s.opaqueAnchors(start, s.pos, it.k)
		n, c = nil, 0
	}
	it.end, it.n, it.count, it.unsup = s.pos, n, c, u
	it.anchors, it.deps = len(s.curAnchors) > 0, s.deps
	s.cur = -1
	if !s.item(it) {
		panic(yStop{})
	}
	if !it.anchors && u == nil {
		s.a.reset(mark)
		s.keySetOf = nil
	}
	return nil, it.count
}

// try runs parse, turning a *yunsup into a result.
func (s *yscan) try(parse func() (*ynode, int64)) (n *ynode, c int64, u *yunsup) {
	defer func() {
		if r := recover(); r != nil {
			x, ok := r.(*yunsup)
			if !ok {
				panic(r)
			}
			n, c, u = nil, 0, x
		}
	}()
	n, c = parse()
	return n, c, nil
}

// opaqueAnchors registers the anchors written in src[from:to] (an item
// the scanner did not take) as go-yaml's: an alias of one sends its item
// to go-yaml too, with the defining item beside it.
func (s *yscan) opaqueAnchors(from, to, k int) {
	t := s.src[from:to]
	for {
		i := strings.IndexByte(t, '&')
		if i < 0 {
			return
		}
		t = t[i+1:]
		j := 0
		for j < len(t) && (t[j] >= 'a' && t[j] <= 'z' || t[j] >= 'A' && t[j] <= 'Z' || t[j] >= '0' && t[j] <= '9' || t[j] == '_' || t[j] == '-') {
			j++
		}
		if j > 0 {
			if _, ok := s.anchors[t[:j]]; !ok {
				s.anchors[t[:j]] = &yanchor{item: k}
				s.curAnchors = append(s.curAnchors, t[:j])
			}
		}
		t = t[j:]
	}
}

// skipBlockItem moves past a block sequence item the scanner did not
// take: to the next line, outside brackets, that is not blank, a comment
// or indented more than the item's dash at column c.
func (s *yscan) skipBlockItem(c int) { s.skipItem(c, false) }

// skipFlowItem moves past a flow sequence item the scanner did not take:
// to the comma or bracket that ends it.
func (s *yscan) skipFlowItem() { s.skipItem(0, true) }

// skipItem moves past an item the scanner did not take, minding quotes,
// comments and brackets (skipBlockItem, skipFlowItem).
func (s *yscan) skipItem(c int, flow bool) {
	depth := 0
	for !s.eof() {
		switch b := s.ch(); b {
		case '\n':
			s.nl()
			if depth > 0 || flow {
				continue
			}
			j := s.pos
			for j < len(s.src) && (s.src[j] == ' ' || s.src[j] == '\t') {
				j++
			}
			if j == len(s.src) || s.src[j] == '\n' || s.src[j] == '#' || s.col(j) > c {
				continue
			}
			s.pos = j
			return
		case '"', '\'':
			if p := s.at(s.pos - 1); s.pos > s.lineStart && strings.IndexByte(" \t[{,:-", p) < 0 {
				break // a quote inside a plain scalar
			}
			s.pos++
			for !s.eof() && s.ch() != b {
				switch {
				case s.ch() == '\n':
					s.nl()
				case s.ch() == '\\' && b == '"' && s.at(s.pos+1) != '\n':
					s.pos = min(s.pos+2, len(s.src))
				default:
					s.pos++
				}
			}
		case '#':
			if s.pos == s.lineStart || strings.IndexByte(" \t[{,", s.at(s.pos-1)) >= 0 {
				s.comment()
				continue
			}
		case '[', '{':
			depth++
		case ']', '}':
			if depth == 0 && flow {
				return
			}
			depth = max(depth-1, 0)
		case ',':
			if depth == 0 && flow {
				return
			}
		}
		if !s.eof() {
			s.pos++
		}
	}
	if flow {
		s.unsup("the end inside a flow collection")
	}
}
