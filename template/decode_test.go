package template

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"
)

// sameAsGoYAML checks decodeRaw against go-yaml's decoder on data: when
// decodeRaw takes a tree, go-yaml decodes it without error into the same
// raw values; it reports whether decodeRaw took it.
func sameAsGoYAML(t *testing.T, data []byte) bool {
	t.Helper()
	f, err := parser.ParseBytes(data, 0)
	if err != nil || len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return false
	}
	root := f.Docs[0].Body
	var fast rawFile
	if !decodeRaw(root, &fast) {
		if !reflect.DeepEqual(fast, rawFile{}) {
			t.Fatalf("decodeRaw gave up but left values behind:\n%s", data)
		}
		return false
	}
	var slow rawFile
	if err := yaml.NodeToValue(root, &slow, yaml.Strict()); err != nil {
		t.Fatalf("decodeRaw took a template go-yaml refuses (%v):\n%s", err, data)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("decodeRaw and go-yaml differ:\n%+v\n%+v\n%s", fast, slow, data)
	}
	return true
}

// TestDecodeRawAsGoYAML: the fast decoder of the raw values takes every
// example template and gives go-yaml's values; what it does not take
// (aliases, merge keys, tags on mappings, unknown or repeated keys, a list
// where a mapping belongs) goes to go-yaml, so that its errors keep their
// messages and positions.
func TestDecodeRawAsGoYAML(t *testing.T) {
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
		if !sameAsGoYAML(t, data) {
			t.Errorf("%s: not taken by decodeRaw", p)
		}
	}
	for _, y := range testTemplates {
		sameAsGoYAML(t, []byte(y))
	}
	for _, c := range []struct {
		yaml  string
		taken bool
	}{
		{"streams: [{ipv4: {}, udp: {dst: 9}}]", true},
		{"streams:\n  - &s {ipv4: {src: 198.18.0.1}, udp: {}}\n", true},
		{"seed: &x 7\nstreams: [{udp: {dst: &p 9}, ipv4: {}}]\n", true},
		{"streams: [{name: ~, ipv4: {}, udp: {}}]", true},
		{"streams: [{payload: {fields: [{offset: 0, width: 2, value: 1}]}, ipv4: {}, udp: {}}]", true},
		{"streams: [{mpls: [{label: 1}, {label: 2}], ipv4: {}, udp: {}}]", true},
		{"streams: [{ipv4: {ttl: !!int 5}, udp: {}}]", true},
		{"streams: [{ipv4: {}, gre: {inner: {ipv4: {}, udp: {}}}}]", true},
		{"base: &b {ipv4: {}}\nstreams: [*b]\n", false},           // an unknown key
		{"streams:\n  - &a {ipv4: {}, udp: {}}\n  - *a\n", false}, // an alias
		{"streams:\n  - {ipv4: &v {ttl: 3}, udp: {}}\n  - {ipv4: *v, udp: {}}\n", false},
		{"streams: [{<<: {ipv4: {}}, udp: {}}]", false},                          // a merge key
		{"streams: [{ipv4: {}, ipv4: {}}]", false},                               // a repeated key
		{"streams: [{ipv5: {}}]", false},                                         // an unknown key
		{"streams: [5]", false},                                                  // not a mapping
		{"streams: {ipv4: {}}", false},                                           // not a list
		{"streams: [~]", false},                                                  // a null stream
		{"streams: [{ipv4: !!map {}, udp: {}}]", false},                          // a tag on a mapping
		{"streams: [{ipv4: [], udp: {}}]", false},                                // a list for a mapping
		{"streams: [{mpls: {label: 1}, ipv4: {}}]", false},                       // a mapping for a list
		{"streams: [{1: x}]", false},                                             // a key that is not a string
		{"- 1\n- 2\n", false},                                                    // not a mapping at the top
		{"streams: [{ipv4: {}, udp: {}}]\nstreams: []\n", false},                 // a repeated top key
		{"streams:\n  - ipv4: {}\n    udp: {}\n    payload: {text: hi}\n", true}, // block style
	} {
		if got := sameAsGoYAML(t, []byte(c.yaml)); got != c.taken {
			t.Errorf("%q: taken %v, want %v", c.yaml, got, c.taken)
		}
	}
}

// FuzzDecodeRaw: on any input, what decodeRaw takes go-yaml decodes to
// the same raw values.
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
	f.Add([]byte("streams:\n  - &a {ipv4: {}, udp: {}}\n  - *a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 || strings.Count(string(data), "*") > 16 {
			return // aliases fan out: the parser's limits are Parse's, not this test's
		}
		sameAsGoYAML(t, data)
	})
}
