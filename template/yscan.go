package template

import (
	"strings"
	"unicode/utf8"
)

// yscan reads the YAML that templates are written in into ynodes, one
// streams item at a time, without a token list or a tree of the whole
// file: the common shapes of YAML (block and flow mappings and
// sequences, plain and quoted scalars on one line, comments, anchors,
// aliases, merge keys), each value positioned where go-yaml's token
// for it is.
//
// It is deliberately narrow. On anything else — a syntax error, or YAML
// it does not take (block scalars, multi-line scalars, tags, complex
// keys, directives, a second document, a tab, a carriage return, an
// alias it cannot resolve, an anchor defined twice) — it stops with
// *yunsup naming where, and the caller asks go-yaml about the file (or,
// for a large file, about the stream item in question: parse.go), so
// that what go-yaml refuses is refused with go-yaml's message and what it
// takes is read as it reads it. FuzzDecodeRaw holds the two readers to
// the same trees.
type yscan struct {
	src       string
	pos       int
	line      int // the line of pos, 1-based
	lineStart int // the offset where that line starts
	colPos    int // col's cache: the offset it counted continuation bytes to
	colAdj    int // and how many it found on the line before colPos

	a       *arena
	anchors map[string]*yanchor

	// maxValues and over: checkExpansion's count as the scan goes (every
	// value, mapping entry, anchor and alias once, an alias as much as
	// its anchor's value), and where it first passed maxValues.
	maxValues int64
	over      bool
	overLine  int
	overCol   int
	total     int64 // the document's count

	depth    int // the collections open around pos
	flowMaps int // the flow mappings among them

	// streams is set while the value of the root's streams key is about
	// to be read: a sequence read then hands its items to item one by one
	// instead of keeping them (item returns false to stop the scan).
	streams    bool
	item       func(it *yitem) bool
	nitems     int
	cur        int      // the streams item being read; -1 outside one
	curAnchors []string // the anchors it defines
	deps       []int    // the items whose anchors its aliases name

	it       yitem               // the item handed to item
	keySet   map[string]struct{} // dupKey's keys of a long mapping
	keySetOf *ynode

	top     *ynode // the root collection, once it is begun
	topFlow bool   // a flow collection
	seq     *ynode // the streams sequence, once begun, if it is streamed
	seqFlow bool   // a flow sequence
	seqDone bool   // its items are all read
}

// yitem is one item of the streams sequence, as the scanner hands it on.
type yitem struct {
	k          int
	n          *ynode // nil when the scanner did not take it (unsup)
	count      int64  // checkExpansion's count of it (the handler sets it for an item the scanner did not take)
	start, end int    // its bytes: from its dash (or first byte, in a flow sequence) to its end
	startLine  int
	unsup      *yunsup // why the scanner did not take it
	anchors    bool    // it defines an anchor (its nodes are kept)
	deps       []int   // the earlier items whose anchors it names
}

// yStop is what the scan panics with when the item handler stops it.
type yStop struct{}

// yanchor is an anchor the scan has met.
type yanchor struct {
	node     *ynode // nil: in an item the scanner did not take
	count    int64  // checkExpansion's count of its value
	item     int    // the streams item that defines it; -1 outside the items
	building bool   // its value is being read
}

// yunsup says where the scanner stopped and why.
type yunsup struct {
	pos, line int
	why       string
}

func (u *yunsup) Error() string { return u.why }

func newYscan(src string, a *arena) *yscan {
	return &yscan{src: src, line: 1, a: a, anchors: map[string]*yanchor{}, maxValues: MaxTemplateValues, cur: -1}
}

func (s *yscan) unsup(why string) {
	panic(&yunsup{pos: s.pos, line: s.line, why: why})
}

// run reads the one document of src into a tree whose streams items went
// to s.item; it returns the root, or the *yunsup it stopped at, or
// stopped when the item handler stopped it.
func (s *yscan) run() (root *ynode, u *yunsup, stopped bool) {
	defer func() {
		if r := recover(); r != nil {
			switch x := r.(type) {
			case *yunsup:
				root, u = nil, x
			case yStop:
				root, stopped = nil, true
			default:
				panic(r)
			}
		}
	}()
	s.checkBytes()
	return s.document(), nil, false
}

// checkBytes refuses what the scanner never takes anywhere: control
// characters but line feeds and tabs (tabs are refused where they
// matter), invalid UTF-8, and the characters YAML 1.1 reads as line
// breaks or byte-order marks.
func (s *yscan) checkBytes() {
	ascii := true
	for i := 0; i < len(s.src); i++ {
		c := s.src[i]
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			s.pos = i
			s.unsup("a control character")
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	if ascii {
		return
	}
	for i, r := range s.src {
		if r == utf8.RuneError || r == 0x85 || r == 0x2028 || r == 0x2029 || r == 0xfeff || r >= 0x80 && r < 0xa0 {
			s.pos = i
			s.unsup("invalid UTF-8 or a special character")
		}
	}
}

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

// Documents and block collections.

func (s *yscan) document() *ynode {
	c := s.blank()
	if s.eof() {
		s.unsup("no document")
	}
	if c == 1 && s.marker("---") {
		s.pos += 3
		s.eol()
		if c = s.blank(); s.eof() {
			s.unsup("no document")
		}
	}
	if c == 1 && (s.marker("---") || s.marker("...") || s.ch() == '%') {
		s.unsup("a document marker or directive")
	}
	root, total := s.value(0, ctxLine)
	if root.kind != yMapping && root.kind != ySequence {
		s.unsup("a document that is not a collection")
	}
	s.total = total
	if s.blank(); !s.eof() {
		s.unsup("more after the document's root")
	}
	return root
}

// Where a value starts, which shapes it may take.
const (
	ctxLine  = iota // a line of its own: a block collection, a flow collection
	ctxEntry        // after "- ": also a scalar, a compact mapping or sequence
	ctxValue        // after "key: " or an anchor: a scalar or a flow collection
)

// value reads the value at pos, in a block whose indentation is pi.
func (s *yscan) value(pi, ctx int) (*ynode, int64) {
	switch s.ch() {
	case '&':
		return s.anchored(pi, ctx)
	case '*':
		n, c := s.alias()
		s.eol()
		return n, c
	case '[', '{':
		n, c := s.flow(pi)
		if s.ch() == ':' {
			s.unsup("a flow collection as a key")
		}
		s.eol()
		return n, c
	case '-':
		if s.entry() {
			if ctx == ctxValue {
				s.unsup("a sequence entry after a key on its line")
			}
			return s.blockSeq(s.col(s.pos))
		}
	}
	col := s.col(s.pos)
	k := s.scalar(false)
	if s.ch() == ':' {
		if ctx == ctxValue {
			s.unsup("a key where a value belongs")
		}
		return s.blockMap(col, k)
	}
	if k.flags&yMerge != 0 || ctx == ctxLine {
		s.unsup("a scalar on a line of its own")
	}
	s.eol()
	return k, 1
}

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
	st := s.pos
	end := st
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case c == '\n':
			goto done
		case c == ' ':
			j := s.pos
			for j < len(s.src) && s.src[j] == ' ' {
				j++
			}
			if j == len(s.src) {
				goto done
			}
			switch b := s.src[j]; {
			case b == '\n':
				// go-yaml puts a plain scalar that blanks end on its
				// line as many columns further as there are blanks.
				n.col += int32(j - s.pos)
				goto done
			case b == '#':
				goto done
			case b == '\t':
				s.unsup("a tab")
			case flow && (b == ',' || b == ']' || b == '}'):
				goto done
			case b == ':':
				s.unsup("a blank before a colon")
			}
			s.pos = j
			continue
		case c == ':':
			b := s.at(s.pos + 1)
			if s.pos+1 == len(s.src) || b == ' ' || b == '\n' {
				goto done
			}
			if flow && (b == ',' || b == ']' || b == '}' || b == '[' || b == '{') {
				s.unsup("a colon before a flow indicator")
			}
			s.pos++
		case flow && (c == ',' || c == ']' || c == '}'):
			goto done
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
done:
	n.text = s.src[st:end]
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
