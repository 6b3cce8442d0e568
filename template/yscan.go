package template

import (
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
//
// Its parts: the line reader (yscan_line.go), block and flow collections
// (yscan_block.go, yscan_flow.go), scalars (yscan_scalar.go), anchors,
// aliases and merge keys (yscan_anchor.go), and the streams items handed
// on one by one (yscan_items.go).
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

// Documents.

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
