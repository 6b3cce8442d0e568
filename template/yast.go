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

// node converts n (nil for nil).
func (c *yconv) node(n ast.Node) *ynode {
	if n == nil {
		return nil
	}
	if y, ok := c.memo[n]; ok {
		return y
	}
	y := c.a.alloc()
	c.memo[n] = y
	pos := func(n ast.Node) {
		if tk := n.GetToken(); tk != nil {
			y.line, y.col = int32(tk.Position.Line), int32(tk.Position.Column)
		}
	}
	switch n := n.(type) {
	case *ast.AnchorNode, *ast.TagNode:
		// The value, marked.
		inner, flag := ast.Node(nil), uint8(yAnchored)
		if a, ok := n.(*ast.AnchorNode); ok {
			inner = a.Value
		} else {
			inner, flag = n.(*ast.TagNode).Value, yTagged
		}
		v := c.node(inner)
		if v == nil {
			v = y
			v.text, v.flags = "null", yNull
			pos(n)
		}
		v.flags |= flag
		c.memo[n] = v
		return v
	case *ast.AliasNode:
		y.kind, y.text = yAlias, "*"
		if n.Value != nil {
			y.text = n.Value.GetToken().Value
		}
		pos(n)
		if t, ok := c.target[n]; ok && !c.open[t] {
			y.first = c.node(t)
		}
		if y.first == nil {
			// Its anchor is not there, or it is inside it: a scalar "*",
			// as go-yaml's tree gave wpg before.
			y.kind, y.text = yScalar, "*"
		}
	case *ast.MappingNode:
		y.kind = yMapping
		c.open[n] = true
		var tail *ynode
		for i, mv := range n.Values {
			k, v := c.key(mv.Key), c.node(mv.Value)
			if v == nil {
				v = c.a.alloc()
				v.text, v.flags = "null", yNull
			}
			if i == 0 && !n.IsFlowStyle {
				y.line, y.col = k.line, k.col // errAt's position for a block mapping
			}
			y.add(&tail, k)
			y.add(&tail, v)
			y.n++
		}
		delete(c.open, n)
		if n.IsFlowStyle || len(n.Values) == 0 {
			y.flags |= yFlow
			pos(n)
		}
	case *ast.MappingValueNode:
		y.kind = yMapping
		k, v := c.key(n.Key), c.node(n.Value)
		if v == nil {
			v = c.a.alloc()
			v.text, v.flags = "null", yNull
		}
		y.first, k.next, y.n = k, v, 1
		y.line, y.col = k.line, k.col
	case *ast.SequenceNode:
		y.kind = ySequence
		c.open[n] = true
		var tail *ynode
		for _, e := range n.Values {
			v := c.node(e)
			if v == nil {
				v = c.a.alloc()
				v.text, v.flags = "null", yNull
			}
			y.add(&tail, v)
			y.n++
		}
		delete(c.open, n)
		if n.IsFlowStyle {
			y.flags |= yFlow
		}
		pos(n)
	case *ast.NullNode:
		y.text, y.flags = astText(n), yNull
		pos(n)
	default:
		y.text = astText(n)
		pos(n)
	}
	return y
}

// key converts a mapping key: a scalar whose text is the key as wpg
// reads it (keyString).
func (c *yconv) key(k ast.MapKeyNode) *ynode {
	y := c.a.alloc()
	y.text = keyString(k)
	if k != nil {
		if tk := k.GetToken(); tk != nil {
			y.line, y.col = int32(tk.Position.Line), int32(tk.Position.Column)
		}
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
