package template

import (
	"reflect"
	"slices"
	"strings"
	"sync"
)

// rawDecoder fills the raw types (parse.go) from ynodes without go-yaml's
// reflective decoder, which rebuilds the field map of a struct type (tags
// parsed, a map allocated) for every mapping it decodes: some 13 KB and
// 60 µs per stream, 1 GB and seconds for the 65,535 streams a template
// may hold. Here each raw type's fields are looked up once per process
// (rawFields) and each mapping costs its keys.
//
// It takes what go-yaml's decoder takes the same way: mappings for the
// raw structs, sequences of mappings for their lists, any value for a
// node, aliases as the value their anchor marks, merge keys (<<) of a
// mapping whose keys the rest of the mapping does not repeat. On anything
// else — an unknown or repeated key, a list where a mapping belongs, a
// null where a layer belongs, a merge key of a list or inside a value —
// it returns false, having changed nothing the caller keeps: the caller
// then asks go-yaml (parse.go), for go-yaml's error and its position, or
// for its reading of what go-yaml takes and this decoder does not.
type rawDecoder struct {
	seen map[string]struct{} // the keys of the mapping being decoded (reused)
	// pool, when not nil, holds the raw structs of the layers, reused
	// from one stream to the next (reuse): nothing keeps a stream's raw
	// values once its Stream is made.
	pool map[reflect.Type]*rawPool
}

type rawPool struct {
	vals []reflect.Value // pointers to structs of one type
	used int
}

// reuse takes back the structs handed out since the last reuse.
func (d *rawDecoder) reuse() {
	if d.pool == nil {
		d.pool = map[reflect.Type]*rawPool{}
	}
	for _, pl := range d.pool {
		pl.used = 0
	}
}

// newStruct is a pointer to a zero struct of type t.
func (d *rawDecoder) newStruct(t reflect.Type) reflect.Value {
	if d.pool == nil {
		return reflect.New(t)
	}
	pl := d.pool[t]
	if pl == nil {
		pl = &rawPool{}
		d.pool[t] = pl
	}
	if pl.used < len(pl.vals) {
		v := pl.vals[pl.used]
		v.Elem().SetZero()
		pl.used++
		return v
	}
	v := reflect.New(t)
	pl.vals = append(pl.vals, v)
	pl.used++
	return v
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

// decode fills the struct dst from the mapping n; skip is a value not to
// decode (the streams sequence while it is streamed: its items are
// decoded one by one).
func (d *rawDecoder) decode(dst reflect.Value, n, skip *ynode) bool {
	m := n.deref()
	if m == nil || m.kind != yMapping {
		return false
	}
	fields := rawFields(dst.Type())
	if d.seen == nil {
		d.seen = make(map[string]struct{}, 32)
	}
	clear(d.seen)
	// The keys first, all of them (a nested mapping reuses seen), those
	// a merge key brings in included.
	if !d.keys(m, fields, 0) {
		return false
	}
	ok := true
	d.each(m, func(k, v *ynode) {
		if !ok {
			return
		}
		f := fields[k.text]
		fv := dst.FieldByIndex(f.index)
		vv := v.deref()
		switch f.kind {
		case fieldNode:
			if vv.flags&yNull != 0 && vv.kind == yScalar {
				if v.kind == yAlias {
					ok = false // go-yaml's own ways with an alias of nothing
				}
				return // as node.UnmarshalYAML: not set
			}
			fv.Set(reflect.ValueOf(node{n: vv}))
		case fieldStruct:
			p := d.newStruct(fv.Type().Elem())
			if !d.decode(p.Elem(), v, nil) {
				ok = false
				return
			}
			fv.Set(p)
		case fieldSlice:
			if v == skip && skip != nil {
				return
			}
			if vv.kind != ySequence {
				ok = false
				return
			}
			s := reflect.MakeSlice(fv.Type(), int(vv.n), int(vv.n))
			for i, e := range vv.items() {
				if e.kind != yMapping || !d.decode(s.Index(i), e, nil) {
					ok = false
					return
				}
			}
			fv.Set(s)
		}
	})
	return ok
}

// keys checks the keys of mapping m (and of those its merge keys bring
// in) against fields, none twice.
func (d *rawDecoder) keys(m *ynode, fields map[string]rawField, depth int) bool {
	if depth > 8 {
		return false
	}
	for k, v := range m.pairs() {
		if k.flags&yMerge != 0 {
			if v.kind != yMapping || !d.keys(v, fields, depth+1) {
				return false
			}
			continue
		}
		if _, dup := d.seen[k.text]; dup {
			return false
		}
		if _, known := fields[k.text]; !known || k.flags&yNull != 0 {
			return false
		}
		d.seen[k.text] = struct{}{}
	}
	return true
}

// each calls f with the keys and values of m, merge keys' mappings in
// their place.
func (d *rawDecoder) each(m *ynode, f func(k, v *ynode)) {
	for k, v := range m.pairs() {
		if k.flags&yMerge != 0 {
			d.each(v, f)
			continue
		}
		f(k, k.next)
	}
}
