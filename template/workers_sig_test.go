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
	return one[wb] == 0 && int(f[wb]) == workers-1 && sameFrame(one, f)
}

// sameFrame reports whether a and b are the same frame but for what the
// sender count changes: the signature's workers byte and the two bytes of
// the checksum covering it.
func sameFrame(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	wb := len(a) - frame.SignatureLen + 4
	first := -1
	for i := range a {
		if i == wb || a[i] == b[i] {
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
