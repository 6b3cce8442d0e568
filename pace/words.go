package pace

import "strings"

// words names the values of a small enumeration the way its flag spells
// them; the first is the default, which "" also selects.
type words[T comparable] []struct {
	name string
	v    T
}

// parse returns the value s names (surrounding space and case ignored).
func (w words[T]) parse(s string) (T, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return w[0].v, true
	}
	for _, e := range w {
		if e.name == s {
			return e.v, true
		}
	}
	return w[0].v, false
}

// name returns v's name, or the default's for a value without one.
func (w words[T]) name(v T) string {
	for _, e := range w {
		if e.v == v {
			return e.name
		}
	}
	return w[0].name
}
