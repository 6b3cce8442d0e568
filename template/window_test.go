package template

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// windowed reads data as a template above wholeMax is read: go-yaml only
// ever reads windows of it.
func windowed(data []byte) (*Spec, error) {
	p := newParser("big.wpg.yaml", normalize(data))
	if e := p.prescan(p.data); e != nil {
		return nil, e
	}
	p.wholeMax = -1
	s, err, done := p.native()
	if !done {
		return nil, errors.New("native gave up on a large template")
	}
	return s, err
}

// referenced reads data as wpg always has: go-yaml's tree and decoder.
func referenced(data []byte) (*Spec, error) {
	p := newParser("big.wpg.yaml", normalize(data))
	if e := p.prescan(p.data); e != nil {
		return nil, e
	}
	return p.reference()
}

// goodStream is the i-th stream of the templates around a bad one.
func goodStream(i int) string {
	return fmt.Sprintf("  - {name: s%d, ipv4: {src: 198.18.0.%d}, udp: {dst: %d}}\n", i, 1+i%250, 1+i)
}

// around writes a template of the streams before, the stream bad and the
// streams after (block style), or the same as a flow list.
func around(before int, bad string, after int, flow bool) []byte {
	var b strings.Builder
	b.WriteString("seed: 7\nstreams:\n")
	if flow {
		b.WriteString("  [\n")
	}
	item := func(s string) {
		if flow {
			s = strings.Replace(strings.TrimSuffix(s, "\n"), "  - ", "    ", 1) + ",\n"
		}
		b.WriteString(s)
	}
	for i := range before {
		item(goodStream(i))
	}
	item(bad)
	for i := range after {
		item(goodStream(before + 1 + i))
	}
	if flow {
		b.WriteString("    {name: last, ipv4: {}, udp: {}}\n  ]\n")
	}
	return []byte(b.String())
}

// TestLargeTemplateErrors: read a window at a time, as one above 256 KB is,
// a template gives what go-yaml's reading of the whole file gives: the
// same error (message, file:line:col, path, fix) for what goes wrong in
// large generated templates, and the same Spec for what go-yaml reads in
// the scanner's stead.
func TestLargeTemplateErrors(t *testing.T) {
	bad := []struct {
		name, yaml string
		block      bool // block style only
	}{
		{"unknown key", "  - {ipv4: {}, udpp: {}}\n", false},
		{"two unknown keys", "  - {ipv4: {}, udpp: {}, tpc: {}}\n", false},
		{"list for a mapping", "  - {ipv4: [], udp: {}}\n", false},
		{"repeated key", "  - {ipv4: {}, ipv4: {}}\n", false},
		{"undefined alias", "  - {size: {imix: {64: *undef}}, ipv4: {}}\n", false},
		{"unclosed bracket", "  - {ipv4: {}, udp: {dst: 9}\n", true},
		{"bad address", "  - {ipv4: {src: 198.18.0.300}}\n", false},
		{"key without a value", "  - ipv4:\n    udp: {}\n", true},
		{"tag", "  - {ipv4: {ttl: !!int 5}}\n", false},
		{"block scalar", "  - ipv4: {}\n    payload:\n      text: |\n        hello\n", true},
		{"quoted over two lines", "  - {ipv4: {}, payload: {text: \"hello\n      world\"}}\n", false},
		{"merge of a stream read by go-yaml", "  - &b\n    ipv4: {}\n    payload: {text: !!str x}\n", true},
		{"a null stream", "  - ~\n", false},
	}
	for _, c := range bad {
		for _, flow := range []bool{false, true} {
			if flow && c.block {
				continue
			}
			for _, at := range []struct{ before, after int }{{0, 20}, {10, 10}, {20, 0}} {
				data := around(at.before, c.yaml, at.after, flow)
				t.Run(fmt.Sprintf("%s/flow=%v/at=%d", c.name, flow, at.before), func(t *testing.T) {
					want, wantErr := referenced(data)
					got, gotErr := windowed(data)
					if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
						t.Fatalf("read a window at a time:\n  %v\nread whole:\n  %v\n%s", gotErr, wantErr, data)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("different Specs:\n%+v\n%+v", got, want)
					}
				})
			}
		}
	}
}

// TestLargeTemplateAliases: a large template's streams that name anchors
// of earlier streams, and its seed written after the streams, are read as
// go-yaml reads the whole file.
func TestLargeTemplateAliases(t *testing.T) {
	for _, y := range []string{
		"streams:\n  - &s {ipv4: {}, udp: {dst: 9}}\n" + strings.Repeat("  - *s\n", 20),
		"streams:\n  - &s {ipv4: {src: 198.18.0.1}, udp: {dst: 9}}\n" + strings.Repeat("  - <<: *s\n    name: x\n", 20),
		"streams:\n  - {ipv4: &a {src: 198.18.0.1}, udp: {}}\n" + strings.Repeat("  - {ipv4: *a, udp: {dst: 2}}\n", 20),
		// An anchor in a stream go-yaml reads (a block scalar), named by
		// streams after it: they go to go-yaml too, with it.
		"streams:\n  - &s\n    ipv4: {}\n    payload:\n      text: |\n        hi\n" + strings.Repeat("  - *s\n", 5),
		"streams:\n" + strings.Repeat("  - {ipv4: {}, udp: {src: {from: 1, to: 9, mode: random}}}\n", 5) + "seed: 42\n",
		"streams: [{ipv4: {}, udp: {}},\r\n  # a comment\r\n  {ipv6: {}, udp: {}}]\r\n",
	} {
		want, wantErr := referenced([]byte(y))
		got, gotErr := windowed([]byte(y))
		if wantErr != nil || gotErr != nil {
			t.Fatalf("errors: windows %v, whole %v\n%s", gotErr, wantErr, y)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("different Specs:\n%+v\n%+v\n%s", got, want, y)
		}
	}
}

// TestLargeTemplateNotTaken: a template above 256 KB with YAML the scanner
// does not take in more than maxWindows of its streams is refused, saying
// so, instead of given to go-yaml whole.
func TestLargeTemplateNotTaken(t *testing.T) {
	var b strings.Builder
	b.WriteString("streams:\n")
	for i := 0; b.Len() <= wholeMax; i++ {
		b.WriteString(goodStream(i))
		if i%20 == 0 {
			b.WriteString("  - ipv4: {}\n    payload:\n      text: |\n        hello\n")
		}
	}
	_, err := Parse("big.wpg.yaml", []byte(b.String()))
	var te *Error
	if !errors.As(err, &te) || !errors.Is(err, errNotTaken) || te.Line == 0 || te.Path == "" ||
		!strings.Contains(te.Msg, "more than 64 streams") || !strings.Contains(te.Remedy, "split the template") {
		t.Fatalf("got %v", err)
	}
}

// TestLargeTemplateOverWholeMax: a template above wholeMax with an error in
// one stream gets the error go-yaml gives for the whole file, read a
// window at a time (Parse itself, not the test's windowed); a bracket left
// open makes the rest of the file one stream, of which go-yaml reads no
// more than wholeMax.
func TestLargeTemplateOverWholeMax(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a 700 KB template with go-yaml for the reference")
	}
	n := 5*wholeMax/len(goodStream(1000)) + 100
	for _, bad := range []string{"  - {ipv4: {}, udpp: {}}\n", "  - {ipv4: {}, udp: {dst: 9}\n"} {
		data := around(n/2, bad, n/2, false)
		if len(data) <= 2*wholeMax {
			t.Fatalf("%d bytes", len(data))
		}
		_, want := referenced(data)
		_, got := Parse("big.wpg.yaml", data)
		if want == nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("got\n  %v\nwant\n  %v", got, want)
		}
	}
}
