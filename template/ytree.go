package template

import "iter"

// ynode is a YAML value as a template holds it: a scalar, a mapping, a
// sequence or an alias, with the position go-yaml's token for it has, so
// that every error built from it keeps the file:line:col it had when the
// tree was go-yaml's. It is some 48 bytes, a tenth of what go-yaml holds
// per value (a node, a token and a position, with the text twice), and
// the scanner (yscan.go) builds one stream's values at a time into an
// arena it reuses.
type ynode struct {
	// text is a scalar's value as go-yaml's token holds it (a quoted
	// scalar unquoted, a plain one as written); a key's text; an alias's
	// anchor name.
	text string
	// first is a mapping's first key (its keys and values alternate: key,
	// value, key, value…), a sequence's first item, or the node an alias
	// names.
	first *ynode
	next  *ynode // the next key, value or item of the parent
	// line and col are the position errors name: a scalar's token, a flow
	// collection's bracket, a block sequence's first dash, a block
	// mapping's first key (go-yaml's token for a block mapping is its
	// first colon; errAt points at the first key).
	line, col int32
	n         int32 // a mapping's pairs, a sequence's items
	kind      ykind
	flags     uint8
}

type ykind uint8

const (
	yScalar ykind = iota
	yMapping
	ySequence
	yAlias
)

// ynode flags.
const (
	yFlow     = 1 << iota // a flow collection: {…} or […]
	yNull                 // a null scalar: ~, null, or no value at all
	yAnchored             // marked with &name
	yMerge                // the merge key <<
	yTagged               // marked with a tag (!!str): go-yaml's trees only
	yQuoted               // a quoted scalar: yscan's trees only
)

func (n *ynode) is(k ykind) bool { return n != nil && n.deref().kind == k }

// deref is the node an alias names (itself when not an alias).
func (n *ynode) deref() *ynode {
	for n != nil && n.kind == yAlias && n.first != nil {
		n = n.first
	}
	return n
}

// items are a sequence's items, aliases followed.
func (n *ynode) items() iter.Seq2[int, *ynode] {
	return func(yield func(int, *ynode) bool) {
		i := 0
		for c := n.deref().first; c != nil; c = c.next {
			if !yield(i, c.deref()) {
				return
			}
			i++
		}
	}
}

// pairs are a mapping's keys and values, the values' aliases followed.
func (n *ynode) pairs() iter.Seq2[*ynode, *ynode] {
	return func(yield func(*ynode, *ynode) bool) {
		for k := n.deref().first; k != nil && k.next != nil; k = k.next.next {
			if !yield(k, k.next.deref()) {
				return
			}
		}
	}
}

// pair is a mapping's i-th key and value (nil, nil past its end).
func (n *ynode) pair(i int) (k, v *ynode) {
	for key, val := range n.pairs() {
		if i == 0 {
			return key, val
		}
		i--
	}
	return nil, nil
}

// add links c after *tail as n's last child, and moves *tail to it.
func (n *ynode) add(tail **ynode, c *ynode) {
	if *tail == nil {
		n.first = c
	} else {
		(*tail).next = c
	}
	*tail = c
}

// typeName names the kind of node as go-yaml's node types do in
// messages ("found mapping").
func (n *ynode) typeName() string {
	switch n.deref().kind {
	case yMapping:
		return "mapping"
	case ySequence:
		return "sequence"
	}
	return "string"
}

// arena hands out ynodes from chunks that never move, so that pointers
// into it stay valid; reset takes back every node given out since a mark
// (the scanner reuses one stream's nodes for the next).
type arena struct {
	chunks [][]ynode
	ci, i  int // the next node: chunks[ci][i]
}

const arenaChunk = 1024

func (a *arena) alloc() *ynode {
	if a.ci == len(a.chunks) {
		a.chunks = append(a.chunks, make([]ynode, arenaChunk))
	}
	n := &a.chunks[a.ci][a.i]
	*n = ynode{}
	if a.i++; a.i == arenaChunk {
		a.ci, a.i = a.ci+1, 0
	}
	return n
}

type arenaMark struct{ ci, i int }

func (a *arena) mark() arenaMark   { return arenaMark{a.ci, a.i} }
func (a *arena) reset(m arenaMark) { a.ci, a.i = m.ci, m.i }
