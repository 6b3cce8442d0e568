package template

import (
	_ "embed"
	"fmt"
	"strings"
)

//go:embed default.wpg.yaml
var defaultYAML []byte

// DefaultName is the name the embedded default template reports.
const DefaultName = "default.wpg.yaml (embedded)"

// DefaultYAML returns the text of the embedded default template.
func DefaultYAML() []byte { return append([]byte(nil), defaultYAML...) }

// Default returns the embedded default template: 64-byte UDP/IPv4 frames
// 198.18.0.1 → 198.19.0.1, source port incrementing 1024…65535, destination
// port 9, signature on. wpg bench and wpg send use it when no template is given.
func Default() *Spec {
	s, err := Parse(DefaultName, defaultYAML)
	if err != nil {
		panic("template: embedded default template is invalid: " + err.Error())
	}
	return s
}

// DefaultWithSize returns the embedded default template with frame size n
// (what `--size` means without a template), checked by the parser like any
// template: a size too small for the headers and signature is an *Error.
func DefaultWithSize(n int64) (*Spec, error) {
	yml := strings.Replace(string(defaultYAML), "    size: 64\n", fmt.Sprintf("    size: %d\n", n), 1)
	return Parse(fmt.Sprintf("embedded default template with size %d", n), []byte(yml))
}
