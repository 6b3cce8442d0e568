package template

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"

	"github.com/wpg-dev/wpg/internal/suggest"
)

// yamlErr turns a go-yaml error into a one-line *Error with position,
// field path and, for unknown keys, the keys that are valid there.
func (p *parser0) yamlErr(err error) *Error {
	var ye yaml.Error
	if !errors.As(err, &ye) || ye.GetToken() == nil {
		return &Error{File: p.file, Msg: firstLine(err.Error()), Remedy: "check the YAML syntax", Err: err}
	}
	tk := ye.GetToken()
	e := &Error{File: p.file, Line: tk.Position.Line, Col: tk.Position.Column, Msg: ye.GetMessage(), Err: err}
	if p.ast != nil {
		e.Path = pathAt(p.ast, "", tk.Position.Line, tk.Position.Column)
	}
	var unk *yaml.UnknownFieldError
	var dup *yaml.DuplicateKeyError
	var te *yaml.TypeError
	var ute *yaml.UnexpectedNodeTypeError
	switch {
	case errors.As(err, &unk):
		key := strings.TrimSpace(tk.Value)
		parent := parentPath(e.Path)
		valid := validKeys(parent)
		if k := p.firstUnknown(parent, valid); k != nil {
			// go-yaml names one of a mapping's unknown keys at random:
			// the first.
			key, e.Line, e.Col, e.Path = k.text, int(k.line), int(k.col), joinPath(parent, k.text)
		}
		where := parent
		if where == "" {
			where = "the top level"
		}
		e.Msg = fmt.Sprintf("unknown key %q in %s", key, where)
		if len(valid) > 0 {
			e.Remedy = "valid keys are " + strings.Join(valid, ", ")
			if s := closest(key, valid); s != "" {
				e.Remedy = fmt.Sprintf("did you mean %q? ", s) + e.Remedy
			}
		}
		if parent != "" && strings.Count(parent, ".") == 0 && strings.HasPrefix(parent, "streams[") {
			e.Msg = fmt.Sprintf("unknown key or layer %q in %s", key, parent)
		}
	case errors.As(err, &dup), strings.Contains(e.Msg, "already defined"):
		e.Remedy = "remove one of the two entries"
	case errors.As(err, &te), errors.As(err, &ute):
		e.Remedy = "see docs/templates.md for the shape of " + orTop(e.Path)
		if strings.Contains(e.Msg, "where mapping is expected") || strings.Contains(e.Msg, "into Go struct field") {
			e.Msg = "expected a mapping (key: value pairs) here: " + e.Msg
		}
	default:
		e.Remedy = "fix the YAML syntax at this position"
	}
	if tabIndent(p.data, tk.Position.Line) {
		e.Msg = "a tab in the indentation: " + e.Msg
		e.Remedy = "indent with spaces, not tabs (YAML does not allow tabs in indentation)"
	}
	return e
}

// firstUnknown is the first key of the mapping at path that is not one
// of valid (nil when there is none, or valid is not known).
func (p *parser0) firstUnknown(path string, valid []string) *ynode {
	m := p.lookup(path)
	if len(valid) == 0 || !m.is(yMapping) {
		return nil
	}
	for k := range m.pairs() {
		if k.flags&yMerge == 0 && !slices.Contains(valid, k.text) {
			return k
		}
	}
	return nil
}

// tabIndent reports whether line (1-based) of data has a tab in its
// leading white space.
func tabIndent(data []byte, line int) bool {
	for i := 1; i < line && len(data) > 0; i++ {
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			return false
		}
		data = data[j+1:]
	}
	for _, c := range data {
		switch c {
		case '\t':
			return true
		case ' ':
			continue
		}
		return false
	}
	return false
}

func orTop(path string) string {
	if path == "" {
		return "a template"
	}
	return path
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// checkNulls rejects keys written without a value (`udp:`), which would
// otherwise silently drop a layer. As it always has, it looks neither
// into what an anchor marks nor through an alias, nor under a tag. At the
// root's streams sequence while it is streamed, it gives the first such
// error of its items (p.itemNull).
func (p *parser0) checkNulls(n *ynode, path string) *Error {
	if !p.hasNull(n) {
		return nil // no paths built for nothing
	}
	return p.findNull(n, path)
}

// hasNull reports whether checkNulls finds a key without a value under n.
func (p *parser0) hasNull(n *ynode) bool {
	if n == nil || n.flags&(yAnchored|yTagged) != 0 {
		return false
	}
	if n == p.streamsSeq && p.streaming {
		return p.itemNull != nil
	}
	if n.kind != yMapping && n.kind != ySequence {
		return false
	}
	for c := n.first; c != nil; c = c.next {
		if n.kind == yMapping {
			if c = c.next; c == nil { // the value
				break
			}
			if c.flags&yNull != 0 && c.flags&(yAnchored|yTagged) == 0 {
				return true
			}
		}
		if p.hasNull(c) {
			return true
		}
	}
	return false
}

// findNull is checkNulls's walk with paths.
func (p *parser0) findNull(n *ynode, path string) *Error {
	if n == nil || n.flags&(yAnchored|yTagged) != 0 {
		return nil
	}
	if n == p.streamsSeq && p.streaming {
		return p.itemNull
	}
	switch n.kind {
	case yMapping:
		for k := n.first; k != nil && k.next != nil; k = k.next.next {
			v := k.next
			sub := joinPath(path, k.text)
			if v.flags&yNull != 0 && v.flags&(yAnchored|yTagged) == 0 {
				return &Error{File: p.file, Line: int(k.line), Col: int(k.col), Path: sub,
					Msg: "key without a value", Remedy: fmt.Sprintf("give %s a value, or `%s: {}` for a layer with its defaults", k.text, k.text)}
			}
			if e := p.findNull(v, sub); e != nil {
				return e
			}
		}
	case ySequence:
		i := 0
		for c := n.first; c != nil; c = c.next {
			if e := p.findNull(c, path+"["+strconv.Itoa(i)+"]"); e != nil {
				return e
			}
			i++
		}
	}
	return nil
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func parentPath(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	if path[i] == '[' {
		return path[:i]
	}
	return path[:i]
}

// pathAt returns the field path of the deepest node at line:col.
func pathAt(n ast.Node, path string, line, col int) string {
	switch n := n.(type) {
	case *ast.MappingNode:
		for _, mv := range n.Values {
			if r := pathAt(mv, path, line, col); r != "" {
				return r
			}
		}
	case *ast.MappingValueNode:
		sub := joinPath(path, keyString(n.Key))
		if kt := n.Key.GetToken(); kt != nil && kt.Position.Line == line && kt.Position.Column == col {
			return sub
		}
		if r := pathAt(n.Value, sub, line, col); r != "" {
			return r
		}
		if vt := n.Value.GetToken(); vt != nil && vt.Position.Line == line && vt.Position.Column == col {
			return sub
		}
	case *ast.SequenceNode:
		for i, v := range n.Values {
			sub := fmt.Sprintf("%s[%d]", path, i)
			if r := pathAt(v, sub, line, col); r != "" {
				return r
			}
			if vt := v.GetToken(); vt != nil && vt.Position.Line == line && vt.Position.Column == col {
				return sub
			}
		}
	}
	return ""
}

// lookup finds the node at path (as built by joinPath and [i]) under the
// root; in the streams sequence while it is streamed, only the item being
// read is there.
func (p *parser0) lookup(path string) *ynode {
	n := p.root
	if path == "" || n == nil {
		return n
	}
	segs := splitPath(path)
	if p.streaming && p.streamsSeq != nil && segs[0] == "streams" {
		// The streams key is not yet in the root while its items are read.
		n, segs = p.streamsSeq, segs[1:]
		if len(segs) > 0 {
			if p.cur == nil || segs[0] != "["+strconv.Itoa(p.curK)+"]" {
				// An item read before: only its position is kept.
				i, err := strconv.Atoi(strings.Trim(segs[0], "[]"))
				if err != nil || i < 0 || i >= len(p.itemAt) || len(segs) > 1 {
					return nil
				}
				return &ynode{line: p.itemAt[i][0], col: p.itemAt[i][1]}
			}
			n, segs = p.cur, segs[1:]
		}
	}
	for _, seg := range segs {
		if n == nil {
			return nil
		}
		m := n.deref()
		switch m.kind {
		case yMapping:
			var next *ynode
			for k, v := range m.pairs() {
				if k.text == seg {
					next = v
				}
			}
			if next == nil {
				return nil
			}
			n = next
		case ySequence:
			i, err := strconv.Atoi(strings.Trim(seg, "[]"))
			if err != nil || i < 0 || i >= int(m.n) {
				return nil
			}
			n = nil
			for j, v := range m.items() {
				if j == i {
					n = v
					break
				}
			}
		default:
			return nil
		}
	}
	return n
}

func splitPath(path string) []string {
	var out []string
	for _, part := range strings.Split(path, ".") {
		for {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			j := strings.IndexByte(part[i:], ']')
			if j < 0 {
				// A key that holds '[' itself ("0[."): not an index.
				break
			}
			j += i
			out = append(out, part[i:j+1])
			part = part[j+1:]
		}
		if part != "" {
			out = append(out, part)
		}
	}
	return out
}

// validKeys lists the keys allowed in the mapping at path, from the yaml
// tags of the raw types.
func validKeys(path string) []string {
	t := reflect.TypeOf(rawFile{})
	for _, seg := range splitPath(path) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if strings.HasPrefix(seg, "[") {
			continue
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
		found := false
		for _, f := range yamlFields(t) {
			if tag := f.Tag.Get("yaml"); tag == seg {
				t = f.Type
				found = true
				break
			}
		}
		if !found {
			return nil
		}
	}
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == reflect.TypeOf(node{}) {
		return nil
	}
	var keys []string
	for _, f := range yamlFields(t) {
		if tag := f.Tag.Get("yaml"); tag != "" {
			keys = append(keys, tag)
		}
	}
	return keys
}

// yamlFields lists the fields of struct t in order, with those of an
// inline embedded struct in its place.
func yamlFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Tag.Get("yaml") == ",inline" {
			out = append(out, yamlFields(f.Type)...)
			continue
		}
		out = append(out, f)
	}
	return out
}

// closest returns the candidate within edit distance 2 of s, if any.
func closest(s string, cands []string) string { return suggest.Closest(s, cands) }

// editDistance is suggest.Distance: typos' transpositions cost one.
func editDistance(a, b string) int { return suggest.Distance(a, b) }

// errAt builds an error positioned at n (or, when n is nil, at the node
// found at path or its nearest ancestor): a scalar's token, a flow
// collection's bracket, a block sequence's first dash, a block mapping's
// first key.
func (p *parser0) errAt(n *ynode, path, msg, fix string) *Error {
	if n == nil {
		for q := path; ; q = parentPath(q) {
			if n = p.lookup(q); n != nil || q == "" {
				break
			}
		}
	}
	e := &Error{File: p.file, Path: path, Msg: msg, Remedy: fix}
	if n != nil && n.line > 0 {
		e.Line, e.Col = int(n.line), int(n.col)
	}
	return e
}

// keyErr positions an error at the key of path (for layer-level errors).
func (p *parser0) keyErr(path, msg, fix string) *Error {
	parent := p.lookup(parentPath(path))
	segs := splitPath(path)
	last := ""
	if len(segs) > 0 {
		last = segs[len(segs)-1]
	}
	if parent.is(yMapping) {
		for k := range parent.pairs() {
			if k.text == last {
				return p.errAt(k, path, msg, fix)
			}
		}
	}
	return p.errAt(nil, path, msg, fix)
}

// text returns the scalar at x, or an error when x holds a list or mapping.
func (p *parser0) text(x node, path, what string) (string, error) {
	if !isScalar(x.n) {
		return "", p.errAt(x.n, path, fmt.Sprintf("expected %s here, found %s", what, x.n.typeName()), "write a single value")
	}
	// A copy: the Spec outlives the template's text.
	return strings.Clone(strings.TrimSpace(scalarText(x.n))), nil
}

// scalarText is the text of a scalar (as go-yaml's token holds it).
func scalarText(n *ynode) string { return n.deref().text }

func isScalar(n *ynode) bool {
	k := n.deref().kind
	return k == yScalar || k == yAlias
}
