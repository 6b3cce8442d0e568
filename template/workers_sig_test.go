package template

import (
	"bytes"

	"github.com/wpg-dev/wpg/frame"
)

// sameBut reports whether f, rendered by one of workers workers, is the
// one-worker frame one but for what the worker count changes: the signature's workers byte, workers-1 in f, and the two
// bytes of the L4 checksum that covers it. Both frames' checksums are
// checked on their own by checkFrame. Frames without a signature must be
// equal.
func sameBut(one, f []byte, workers int) bool {
	if _, signed := frame.ParseSignature(one); !signed || len(one) != len(f) {
		return bytes.Equal(one, f)
	}
	wb := len(f) - frame.SignatureLen + 4
	if one[wb] != 0 || int(f[wb]) != workers-1 {
		return false
	}
	first := -1
	for i := range f {
		if i == wb || one[i] == f[i] {
			continue
		}
		if first < 0 {
			first = i
		}
		if i > first+1 {
			return false
		}
	}
	return true
}
