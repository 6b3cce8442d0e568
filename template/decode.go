package template

import (
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/goccy/go-yaml/ast"
)

// decodeRaw fills raw from the template's YAML tree without go-yaml's
// reflective decoder, which rebuilds the field map of a struct type (tags
// parsed, a map allocated) for every mapping it decodes: some 13 KB and
// 60 µs per stream, 1 GB and seconds for the 65,535 streams a template
// may hold. Here each raw type's fields are looked up once per process
// (rawFields) and each mapping costs its keys.
//
// It handles what a template is made of: mappings (block, flow, a single
// key: value), sequences, scalars and anchors. It returns false, having
// changed nothing the caller keeps, on anything else (an alias, a merge
// key, a tag on a mapping or a sequence, a null element, a key that is not
// a plain string) and on every error (an unknown or repeated key, a list
// where a mapping belongs): the caller then decodes with go-yaml, which
// gives the same result for what decodeRaw takes and the positioned error
// messages for the rest, so that every message keeps its file:line:col.
func decodeRaw(root ast.Node, raw *rawFile) bool {
	var d rawDecoder
	var v rawFile
	if !d.value(reflect.ValueOf(&v).Elem(), root) {
		return false
	}
	*raw = v
	return true
}

type rawDecoder struct {
	seen map[string]struct{} // the keys of the mapping being decoded (reused)
}

// rawField is one yaml-tagged field of a raw type; index is its path
// through an inline embedded struct (reflect.Value.FieldByIndex).
type rawField struct {
	index []int
	kind  fieldKind
}

type fieldKind uint8

const (
	fieldNode   fieldKind = iota // node: the YAML value as written
	fieldStruct                  // *rawX: a mapping
	fieldSlice                   // []rawX: a sequence of mappings
)

var (
	nodeType     = reflect.TypeFor[node]()
	rawFieldsMap sync.Map // reflect.Type → map[string]rawField
)

// rawFields is the field table of struct type t, built once.
func rawFields(t reflect.Type) map[string]rawField {
	if m, ok := rawFieldsMap.Load(t); ok {
		return m.(map[string]rawField)
	}
	m := make(map[string]rawField, t.NumField())
	addRawFields(m, t, nil)
	rawFieldsMap.Store(t, m)
	return m
}

// addRawFields adds the fields of struct type t to m, those of an inline
// struct field (`yaml:",inline"`) as its own; at is the index path of
// t in the outer type.
func addRawFields(m map[string]rawField, t reflect.Type, at []int) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		index := append(slices.Clip(at), i)
		if tag == ",inline" && f.Type.Kind() == reflect.Struct {
			addRawFields(m, f.Type, index)
			continue
		}
		if tag == "" || strings.Contains(tag, ",") {
			continue // no raw type has other options; one that does is go-yaml's to decode
		}
		k := fieldNode
		switch {
		case f.Type == nodeType:
		case f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct:
			k = fieldStruct
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			k = fieldSlice
		default:
			continue
		}
		m[tag] = rawField{index: index, kind: k}
	}
}

// value decodes the mapping n into the struct dst.
func (d *rawDecoder) value(dst reflect.Value, n ast.Node) bool {
	n = unanchor(n)
	var pairs []*ast.MappingValueNode
	switch m := n.(type) {
	case *ast.MappingNode:
		pairs = m.Values
	case *ast.MappingValueNode:
		pairs = []*ast.MappingValueNode{m}
	default:
		return false
	}
	fields := rawFields(dst.Type())
	if d.seen == nil {
		d.seen = make(map[string]struct{}, 32)
	}
	clear(d.seen)
	// The keys first, all of them: a nested mapping below reuses seen.
	for _, mv := range pairs {
		k, ok := mv.Key.(*ast.StringNode)
		if !ok || mv.Value == nil {
			return false
		}
		if _, dup := d.seen[k.Value]; dup {
			return false
		}
		if _, known := fields[k.Value]; !known {
			return false
		}
		d.seen[k.Value] = struct{}{}
	}
	for _, mv := range pairs {
		f := fields[mv.Key.(*ast.StringNode).Value]
		fv := dst.FieldByIndex(f.index)
		switch f.kind {
		case fieldNode:
			v := unanchor(mv.Value)
			switch v.(type) {
			case *ast.AliasNode, nil:
				return false
			case *ast.NullNode:
				continue // as node.UnmarshalYAML: not set
			}
			fv.Set(reflect.ValueOf(node{n: v}))
		case fieldStruct:
			p := reflect.New(fv.Type().Elem())
			if !d.value(p.Elem(), mv.Value) {
				return false
			}
			fv.Set(p)
		case fieldSlice:
			seq, ok := unanchor(mv.Value).(*ast.SequenceNode)
			if !ok {
				return false
			}
			s := reflect.MakeSlice(fv.Type(), len(seq.Values), len(seq.Values))
			for i, e := range seq.Values {
				if !d.value(s.Index(i), e) {
					return false
				}
			}
			fv.Set(s)
		}
	}
	return true
}

// unanchor returns the value an anchor (&name) marks, as go-yaml decodes
// it; other nodes as they are.
func unanchor(n ast.Node) ast.Node {
	for {
		a, ok := n.(*ast.AnchorNode)
		if !ok {
			return n
		}
		n = a.Value
	}
}
