package template

import (
	"context"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// yconv turns go-yaml's tree into ynodes, for a template (or a stream
// item of one) that go-yaml reads in the scanner's stead (parse.go): each
// value where yscan would put it, an anchor's value marked, an alias
// naming the value of the anchor before it in the document.
type yconv struct {
	a      *arena
	memo   map[ast.Node]*ynode
	target map[*ast.AliasNode]ast.Node // an alias → the value its anchor marks
	open   map[ast.Node]bool           // values being converted
}

func newYconv(a *arena, root ast.Node) *yconv {
	c := &yconv{a: a, memo: map[ast.Node]*ynode{}, target: map[*ast.AliasNode]ast.Node{}, open: map[ast.Node]bool{}}
	anchors := map[string]ast.Node{}
	var walk func(n ast.Node)
	walk = func(n ast.Node) {
		switch n := n.(type) {
		case *ast.MappingNode:
			for _, mv := range n.Values {
				walk(mv)
			}
		case *ast.MappingValueNode:
			walk(n.Key)
			walk(n.Value)
		case *ast.MappingKeyNode:
			walk(n.Value)
		case *ast.SequenceNode:
			for _, v := range n.Values {
				walk(v)
			}
		case *ast.TagNode:
			walk(n.Value)
		case *ast.AnchorNode:
			walk(n.Value)
			if n.Name != nil {
				anchors[n.Name.GetToken().Value] = n.Value
			}
		case *ast.AliasNode:
			if n.Value != nil {
				if v, ok := anchors[n.Value.GetToken().Value]; ok {
					c.target[n] = v
				}
			}
		}
	}
	walk(root)
	return c
}

// ctxKey carries a *yconv to node.UnmarshalYAML through go-yaml's decoder.
type ctxKey struct{}

func (c *yconv) context() context.Context {
	return context.WithValue(context.Background(), ctxKey{}, c)
}

// node converts n (nil for nil): an anchor's or a tag's value marked,
// an alias, a mapping, one pair, a sequence or a scalar.
func (c *yconv) node(n ast.Node) *ynode {
	if n == nil {
		return nil
	}
	if y, ok := c.memo[n]; ok {
		return y
	}
	y := c.a.alloc()
	c.memo[n] = y
	switch n := n.(type) {
	case *ast.AnchorNode:
		return c.marked(y, n, n.Value, yAnchored)
	case *ast.TagNode:
		return c.marked(y, n, n.Value, yTagged)
	case *ast.AliasNode:
		c.alias(y, n)
	case *ast.MappingNode:
		c.mapping(y, n)
	case *ast.MappingValueNode:
		y.kind = yMapping
		k, v := c.key(n.Key), c.value(n.Value)
		y.first, k.next, y.n = k, v, 1
		y.line, y.col = k.line, k.col
	case *ast.SequenceNode:
		c.sequence(y, n)
	case *ast.NullNode:
		y.text, y.flags = astText(n), yNull
		setPos(y, n)
	default:
		y.text = astText(n)
		setPos(y, n)
	}
	return y
}

// marked converts the value inner of an anchor or a tag n and marks it
// with flag: a null where n has no value (y, at n).
func (c *yconv) marked(y *ynode, n, inner ast.Node, flag uint8) *ynode {
	v := c.node(inner)
	if v == nil {
		v = y
		v.text, v.flags = "null", yNull
		setPos(v, n)
	}
	v.flags |= flag
	c.memo[n] = v
	return v
}

// alias converts an alias: it names the value of its anchor, or it is a
// scalar "*" where the anchor is not there or the alias is inside it (as
// go-yaml's tree gave wpg before).
func (c *yconv) alias(y *ynode, n *ast.AliasNode) {
	y.kind, y.text = yAlias, "*"
	if n.Value != nil {
		y.text = n.Value.GetToken().Value
	}
	setPos(y, n)
	if t, ok := c.target[n]; ok && !c.open[t] {
		y.first = c.node(t)
	}
	if y.first == nil {
		y.kind, y.text = yScalar, "*"
	}
}

// mapping converts a mapping's pairs; a block mapping is where its first
// key is (errAt's position), a flow or empty one where its bracket is.
func (c *yconv) mapping(y *ynode, n *ast.MappingNode) {
	y.kind = yMapping
	c.open[n] = true
	var tail *ynode
	for i, mv := range n.Values {
		k, v := c.key(mv.Key), c.value(mv.Value)
		if i == 0 && !n.IsFlowStyle {
			y.line, y.col = k.line, k.col
		}
		y.add(&tail, k)
		y.add(&tail, v)
		y.n++
	}
	delete(c.open, n)
	if n.IsFlowStyle || len(n.Values) == 0 {
		y.flags |= yFlow
		setPos(y, n)
	}
}

// sequence converts a sequence's items.
func (c *yconv) sequence(y *ynode, n *ast.SequenceNode) {
	y.kind = ySequence
	c.open[n] = true
	var tail *ynode
	for _, e := range n.Values {
		y.add(&tail, c.value(e))
		y.n++
	}
	delete(c.open, n)
	if n.IsFlowStyle {
		y.flags |= yFlow
	}
	setPos(y, n)
}

// value converts the value of a pair or an item: a null where there is
// none.
func (c *yconv) value(n ast.Node) *ynode {
	v := c.node(n)
	if v == nil {
		v = c.a.alloc()
		v.text, v.flags = "null", yNull
	}
	return v
}

// setPos gives y the position of n's token.
func setPos(y *ynode, n ast.Node) {
	if tk := n.GetToken(); tk != nil {
		y.line, y.col = int32(tk.Position.Line), int32(tk.Position.Column)
	}
}

// key converts a mapping key: a scalar whose text is the key as wpg
// reads it (keyString).
func (c *yconv) key(k ast.MapKeyNode) *ynode {
	y := c.a.alloc()
	y.text = keyString(k)
	if k != nil {
		setPos(y, k)
		if k.IsMergeKey() {
			y.flags |= yMerge
		}
	}
	return y
}

// astText is a scalar's text as go-yaml's token holds it.
func astText(n ast.Node) string {
	if tk := n.GetToken(); tk != nil {
		return tk.Value
	}
	return n.String()
}

// keyString is a mapping key's text.
func keyString(k ast.MapKeyNode) string {
	if k == nil {
		return ""
	}
	return strings.TrimSpace(k.GetToken().Value)
}

// lookupAST finds the sequence at key of go-yaml's root mapping.
func lookupAST(root ast.Node, key string) (*ast.SequenceNode, bool) {
	m, ok := root.(*ast.MappingNode)
	if !ok {
		return nil, false
	}
	var seq *ast.SequenceNode
	for _, mv := range m.Values {
		if keyString(mv.Key) == key {
			seq, _ = mv.Value.(*ast.SequenceNode)
		}
	}
	return seq, seq != nil
}
