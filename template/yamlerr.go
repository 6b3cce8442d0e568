package template

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"

	"github.com/wpg-dev/wpg/internal/suggest"
)

// yamlErr turns a go-yaml error into a one-line *Error with position,
// field path and, for unknown keys, the keys that are valid there.
func (p *parser0) yamlErr(err error) error {
	var ye yaml.Error
	if !errors.As(err, &ye) || ye.GetToken() == nil {
		return &Error{File: p.file, Msg: firstLine(err.Error()), Remedy: "check the YAML syntax", Err: err}
	}
	tk := ye.GetToken()
	e := &Error{File: p.file, Line: tk.Position.Line, Col: tk.Position.Column, Msg: ye.GetMessage(), Err: err}
	if p.root != nil {
		e.Path = pathAt(p.root, "", tk.Position.Line, tk.Position.Column)
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
// otherwise silently drop a layer.
func (p *parser0) checkNulls(n ast.Node, path string) *Error {
	switch n := n.(type) {
	case *ast.MappingNode:
		for _, mv := range n.Values {
			if e := p.checkNulls(mv, path); e != nil {
				return e
			}
		}
	case *ast.MappingValueNode:
		k := keyString(n.Key)
		sub := joinPath(path, k)
		if _, null := n.Value.(*ast.NullNode); null || n.Value == nil {
			tk := n.Key.GetToken()
			return &Error{File: p.file, Line: tk.Position.Line, Col: tk.Position.Column, Path: sub,
				Msg: "key without a value", Remedy: fmt.Sprintf("give %s a value, or `%s: {}` for a layer with its defaults", k, k)}
		}
		return p.checkNulls(n.Value, sub)
	case *ast.SequenceNode:
		for i, v := range n.Values {
			if e := p.checkNulls(v, fmt.Sprintf("%s[%d]", path, i)); e != nil {
				return e
			}
		}
	}
	return nil
}

func keyString(k ast.MapKeyNode) string {
	if k == nil {
		return ""
	}
	return strings.TrimSpace(k.GetToken().Value)
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

// lookup finds the node at path (as built by joinPath and [i]).
func lookup(n ast.Node, path string) ast.Node {
	if path == "" {
		return n
	}
	for _, seg := range splitPath(path) {
		switch m := n.(type) {
		case *ast.MappingNode:
			var next ast.Node
			for _, mv := range m.Values {
				if keyString(mv.Key) == seg {
					next = mv.Value
				}
			}
			if next == nil {
				return nil
			}
			n = next
		case *ast.SequenceNode:
			i, err := strconv.Atoi(strings.Trim(seg, "[]"))
			if err != nil || i >= len(m.Values) {
				return nil
			}
			n = m.Values[i]
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
// found at path or its nearest ancestor).
func (p *parser0) errAt(n ast.Node, path, msg, fix string) *Error {
	if n == nil {
		for q := path; ; q = parentPath(q) {
			if n = lookup(p.root, q); n != nil || q == "" {
				break
			}
		}
	}
	e := &Error{File: p.file, Path: path, Msg: msg, Remedy: fix}
	if m, ok := n.(*ast.MappingNode); ok && len(m.Values) > 0 && !m.IsFlowStyle {
		n = m.Values[0].Key // a block mapping: point at its first key
	}
	if n != nil {
		if tk := n.GetToken(); tk != nil {
			e.Line, e.Col = tk.Position.Line, tk.Position.Column
		}
	}
	return e
}

// keyPos positions an error at the key of path (for layer-level errors).
func (p *parser0) keyErr(path, msg, fix string) *Error {
	parent := lookup(p.root, parentPath(path))
	segs := splitPath(path)
	last := ""
	if len(segs) > 0 {
		last = segs[len(segs)-1]
	}
	if m, ok := parent.(*ast.MappingNode); ok {
		for _, mv := range m.Values {
			if keyString(mv.Key) == last {
				return p.errAt(mv.Key, path, msg, fix)
			}
		}
	}
	return p.errAt(nil, path, msg, fix)
}

func scalarText(n ast.Node) string {
	if tk := n.GetToken(); tk != nil {
		return tk.Value
	}
	return n.String()
}

// text returns the scalar at x, or an error when x holds a list or mapping.
func (p *parser0) text(x node, path, what string) (string, error) {
	if !isScalar(x.n) {
		return "", p.errAt(x.n, path, fmt.Sprintf("expected %s here, found %s", what, strings.ToLower(x.n.Type().String())), "write a single value")
	}
	return strings.TrimSpace(scalarText(x.n)), nil
}

func isScalar(n ast.Node) bool {
	switch n.(type) {
	case *ast.MappingNode, *ast.SequenceNode, *ast.MappingValueNode:
		return false
	}
	return true
}
