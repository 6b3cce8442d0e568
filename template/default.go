package template

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/wpg-dev/wpg/frame"
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
//
// The range is the default's own: from the 62 bytes its headers and
// signature take to MaxFrameSize; the error says so, and that payload
// frames up to 1 GiB are for the local paths.
func DefaultWithSize(n int64) (*Spec, error) {
	d := Default()
	st := &d.Streams[0]
	lo, _ := DefaultSizeRange()
	if n < lo || n > MaxFrameSize {
		return nil, &Error{
			Msg:    fmt.Sprintf("frame size %d is outside the %d..%d bytes of the embedded default template (UDP/IPv4 frames: %d of headers + 20 of signature, up to jumbo)", n, lo, MaxFrameSize, st.HeaderLen()),
			Remedy: fmt.Sprintf("use a --size in %d..%d; payload frames up to 1 GiB are for the local paths: add --backend shm (or pipe, unix, cma, memcpy)", lo, MaxFrameSize)}
	}
	yml := strings.Replace(string(defaultYAML), "    size: 64\n", fmt.Sprintf("    size: %d\n", n), 1)
	return Parse(DefaultName, []byte(yml))
}

// DefaultSizeRange returns the frame sizes DefaultWithSize accepts: from
// the embedded template's headers and signature up to MaxFrameSize.
func DefaultSizeRange() (lo, hi int64) {
	st := &Default().Streams[0]
	return int64(st.HeaderLen() + frameSignatureLen(st)), MaxFrameSize
}

func frameSignatureLen(st *Stream) int {
	if st.Signature {
		return frame.SignatureLen
	}
	return 0
}
