package sys

import "errors"

// ErrNotSupported is wrapped by errors for features this kernel or OS lacks.
var ErrNotSupported = errors.New("not supported")
