package template

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"
)

// scanTree reads data with the scanner alone, streams items kept in the
// tree.
func scanTree(data []byte) (*ynode, *yscan, *yunsup) {
	s := newYscan(string(normalize(data)), &arena{})
	root, u, _ := s.run()
	return root, s, u
}

// goTree reads data with go-yaml's parser: its tree as ynodes.
func goTree(data []byte) (root *ynode, total int64, parsed bool) {
	f, err := parser.ParseBytes(normalize(data), 0)
	if err != nil || len(f.Docs) != 1 || f.Docs[0].Body == nil {
		return nil, 0, false
	}
	body := f.Docs[0].Body
	root = newYconv(&arena{}, body).node(body)
	total, _, _ = countValues(body, MaxTemplateValues, nil)
	return root, total, true
}

// sameTree describes the first difference between two trees ("" for none).
func sameTree(a, b *ynode, path string) string {
	switch {
	case a == nil && b == nil:
		return ""
	case a == nil || b == nil:
		return fmt.Sprintf("%s: %v against %v", path, a, b)
	}
	const flags = yNull | yFlow | yAnchored | yMerge
	if a.kind != b.kind || a.text != b.text || a.line != b.line || a.col != b.col || a.n != b.n || a.flags&flags != b.flags&flags {
		return fmt.Sprintf("%s: kind %d %q at %d:%d, %d entries, flags %b against kind %d %q at %d:%d, %d entries, flags %b",
			path, a.kind, a.text, a.line, a.col, a.n, a.flags&flags, b.kind, b.text, b.line, b.col, b.n, b.flags&flags)
	}
	if a.kind == yAlias {
		x, y := a.deref(), b.deref()
		if x.line != y.line || x.col != y.col {
			return fmt.Sprintf("%s: alias of %d:%d against %d:%d", path, x.line, x.col, y.line, y.col)
		}
		return ""
	}
	i := 0
	for x, y := a.first, b.first; x != nil || y != nil; x, y = x.next, y.next {
		if x == nil || y == nil {
			return fmt.Sprintf("%s: a different number of entries", path)
		}
		if d := sameTree(x, y, fmt.Sprintf("%s/%d", path, i)); d != "" {
			return d
		}
		i++
	}
	return ""
}

// sameAsGoYAML checks the scanner against go-yaml on data: what the
// scanner takes, go-yaml's parser takes into the same tree (kinds, texts,
// positions, anchors and aliases) and counts the same values of; what
// go-yaml's parser refuses, the scanner refuses. It reports whether the
// scanner took data.
func sameAsGoYAML(t *testing.T, data []byte) bool {
	t.Helper()
	mine, s, u := scanTree(data)
	theirs, total, parsed := goTree(data)
	if u != nil {
		return false
	}
	if !parsed {
		t.Fatalf("the scanner takes what go-yaml's parser refuses:\n%s", data)
	}
	if d := sameTree(mine, theirs, ""); d != "" {
		t.Fatalf("the scanner and go-yaml differ: %s\n%s", d, data)
	}
	if s.total != total {
		t.Fatalf("the scanner counts %d values, go-yaml's tree %d:\n%s", s.total, total, data)
	}
	return true
}

// sameParse checks that Parse reads data as the reference (go-yaml's tree
// and decoder) does: the same Spec or the same error. Read a window at a
// time (as a template above wholeMax is), it refuses what the reference
// refuses, and takes what the reference takes into the same Spec, but
// YAML that it reads only in small templates or that go-yaml cannot
// read in a part of the file (the messages of windows are
// TestLargeTemplateErrors's). It reports whether Parse read data without
// go-yaml.
func sameParse(t *testing.T, data []byte) (native bool) {
	t.Helper()
	ref := newParser("t.wpg.yaml", normalize(data))
	if e := ref.prescan(ref.data); e != nil {
		return false
	}
	want, wantErr := ref.reference()
	for _, windows := range []bool{false, true} {
		p := newParser("t.wpg.yaml", normalize(data))
		if windows {
			p.wholeMax = -1
		}
		got, gotErr, done := p.native()
		switch {
		case !done && windows:
			t.Fatalf("native gave up on a large template:\n%s", data)
		case !done:
			continue
		case !windows:
			native = true
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("Parse and the reference differ:\n  %v\n  %v\n%s", gotErr, wantErr, data)
			}
		case gotErr == nil && wantErr != nil:
			t.Fatalf("read a window at a time, Parse takes what the reference refuses (%v):\n%s", wantErr, data)
		case gotErr != nil && wantErr == nil && !errors.Is(gotErr, errNotTaken) && !errors.As(gotErr, new(*yaml.SyntaxError)):
			// A window of YAML go-yaml reads only whole may look broken
			// to it: refused, but never taken when the whole is not.
			t.Fatalf("read a window at a time, Parse refuses what the reference takes (%v):\n%s", gotErr, data)
		}
		if wantErr == nil && gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("windows %v: Parse and the reference read different Specs:\n%+v\n%+v\n%s", windows, got, want, data)
		}
	}
	return native
}

// decodeCases are shapes of YAML, with whether the scanner and the
// decoder take them (the rest goes to go-yaml).
var decodeCases = []struct {
	yaml  string
	taken bool
}{
	{"streams: [{ipv4: {}, udp: {dst: 9}}]", true},
	{"streams:\n  - &s {ipv4: {src: 198.18.0.1}, udp: {}}\n", true},
	{"seed: &x 7\nstreams: [{udp: {dst: &p 9}, ipv4: {}}]\n", true},
	{"streams: [{name: ~, ipv4: {}, udp: {}}]", true},
	{"streams: [{payload: {fields: [{offset: 0, width: 2, value: 1}]}, ipv4: {}, udp: {}}]", true},
	{"streams: [{mpls: [{label: 1}, {label: 2}], ipv4: {}, udp: {}}]", true},
	{"streams: [{ipv4: {}, gre: {inner: {ipv4: {}, udp: {}}}}]", true},
	{"streams:\n  - &a {ipv4: {}, udp: {}}\n  - *a\n", true}, // an alias
	{"streams:\n  - {ipv4: &v {ttl: 3}, udp: {}}\n  - {ipv4: *v, udp: {}}\n", true},
	{"streams:\n  - &b {ipv4: {ttl: 3}, udp: {}}\n  - <<: *b\n    name: x\n", true}, // a merge key
	{"streams:\n  - ipv4: {}\n    udp: {}\n    payload: {text: hi}\n", true},        // block style
	{"streams:\n- ipv4:\n    src: 198.18.0.1 # a comment\n  udp:\n    dst: 9\n", true},
	{"streams: [{ipv4: {src: [198.18.0.1, 198.18.0.2]}, udp: {src: {from: 1, to: 9}}}]", true},
	{"streams: [{name: 'it''s', ipv4: {}, payload: {text: \"a\\tb\\u00e9\"}}]", true},
	{"streams: [{ipv6: {src: 2001:2::1}, udp: {}}]", true},
	{"streams: [{size: {imix: {64: *undef}}, ipv4: {}}]", false},  // #23: an undefined alias
	{"streams: [{ipv4: {ttl: !!int 5}, udp: {}}]", false},         // a tag
	{"base: &b {ipv4: {}}\nstreams: [*b]\n", false},               // an unknown key
	{"streams: [{<<: {ipv4: {}}, udp: {}, ipv4: {}}]", false},     // a merge key repeating a key
	{"streams: [{ipv4: {}, ipv4: {}}]", false},                    // a repeated key
	{"streams: [{ipv5: {}}]", false},                              // an unknown key
	{"streams: [5]", false},                                       // not a mapping
	{"streams: {ipv4: {}}", false},                                // not a list
	{"streams: [~]", false},                                       // a null stream
	{"streams: [{ipv4: !!map {}, udp: {}}]", false},               // a tag on a mapping
	{"streams: [{ipv4: [], udp: {}}]", false},                     // a list for a mapping
	{"streams: [{mpls: {label: 1}, ipv4: {}}]", false},            // a mapping for a list
	{"streams: [{1: x}]", false},                                  // a key that is not a field
	{"- 1\n- 2\n", false},                                         // not a mapping at the top
	{"streams: [{ipv4: {}, udp: {}}]\nstreams: []\n", false},      // a repeated top key
	{"streams:\n  - payload: {text: |\n      hi\n    }\n", false}, // a block scalar
	{"streams: [{name: \"a\n  b\", ipv4: {}}]", false},            // a quoted scalar over two lines
	{"streams: [{ipv4: {}, udp: {}}]\r\n", true},                  // a line end of two bytes
	{"streams: [{ipv4: {}, udp: {}}]\r", false},                   // a carriage return alone
}

// TestDecodeAsGoYAML: the scanner and the decoder take every example
// template and give go-yaml's tree and Parse's Spec; what they do not take
// goes to go-yaml, so that its errors keep their messages and positions.
func TestDecodeAsGoYAML(t *testing.T) {
	paths, _ := filepath.Glob("../examples/*.wpg.yaml")
	paths = append(paths, "default.wpg.yaml")
	if len(paths) < 10 {
		t.Fatalf("examples: %v", paths)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !sameAsGoYAML(t, data) || !sameParse(t, data) {
			t.Errorf("%s: not taken by the scanner", p)
		}
	}
	for _, y := range testTemplates {
		sameAsGoYAML(t, []byte(y))
		sameParse(t, []byte(y))
	}
	for _, c := range decodeCases {
		sameAsGoYAML(t, []byte(c.yaml))
		if got := sameParse(t, []byte(c.yaml)); got != c.taken {
			t.Errorf("%q: taken %v, want %v", c.yaml, got, c.taken)
		}
	}
}

// FuzzDecodeRaw: on any input, what the scanner takes go-yaml's parser
// takes into the same tree, and Parse reads it as the reference does
// (go-yaml's parser and decoder): the same Spec, or the same error — what
// go-yaml refuses is refused with go-yaml's message.
func FuzzDecodeRaw(f *testing.F) {
	paths, _ := filepath.Glob("../examples/*.wpg.yaml")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, y := range testTemplates {
		f.Add([]byte(y))
	}
	for _, c := range decodeCases {
		f.Add([]byte(c.yaml))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 || strings.Count(string(data), "*") > 16 || strings.Contains(string(data), "pcap") {
			return // aliases fan out: the parser's limits are Parse's, not this test's; captures are files
		}
		sameAsGoYAML(t, data)
		sameParse(t, data)
	})
}
