package backend

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/wpg-dev/wpg/internal/inputerr"
)

// UnsupportedError says that a backend cannot do what was asked, on this
// system or in this build. It unwraps to errors.ErrUnsupported, so callers
// test for it with errors.Is(err, errors.ErrUnsupported) and read its
// fields with errors.As.
type UnsupportedError struct {
	// Backend is the backend's registered name.
	Backend string
	// What names the feature or setting that is not supported.
	What string
	// Reason says why (the kernel lacks it, the build leaves it out, …).
	Reason string
	// Fix says how to get it, or what to use instead; may be empty.
	Fix string
}

func (e *UnsupportedError) Error() string {
	var b strings.Builder
	b.WriteString(e.Backend)
	if e.What != "" {
		b.WriteString(": " + e.What)
	}
	b.WriteString(" is not supported")
	if e.Reason != "" {
		b.WriteString(": " + e.Reason)
	}
	if e.Fix != "" {
		b.WriteString("; " + e.Fix)
	}
	return b.String()
}

// Unwrap returns errors.ErrUnsupported.
func (e *UnsupportedError) Unwrap() error { return errors.ErrUnsupported }

// LinuxOnly is the Open of backend name on a system other than Linux: it
// fails with an UnsupportedError for what ("a memfd ring shared by two
// processes"), so that a build for that system lists the backend and
// says why it cannot run.
func LinuxOnly(name, what string) OpenFunc {
	return func(context.Context, Options) (Instance, error) {
		return nil, &UnsupportedError{Backend: name, What: what, Reason: "it is Linux only, this is " + runtime.GOOS}
	}
}

// Named is implemented by errors whose text begins with the name of the
// backend they come from ("afpacket: interface …"): a caller that puts
// the backend's name in front of an error (the engine, for a failed Open)
// leaves it out for them, rather than say it twice.
type Named interface {
	error
	// BackendName is the backend's registered name.
	BackendName() string
}

// BackendName returns Backend: the error's text begins with it (Named).
func (e *UnsupportedError) BackendName() string { return e.Backend }

// NamesBackend reports whether the text of err begins with the name of
// backend name: err is Named for that backend, or marks one with a fix
// (inputerr.WithFix keeps the text of the error it marks).
func NamesBackend(err error, name string) bool {
	for {
		switch e := err.(type) {
		case Named:
			return e.BackendName() == name
		case *inputerr.Fixed:
			err = e.Err
		default:
			return false
		}
	}
}

// Error is an error of one backend whose text begins with the backend's
// name, once ("dpdk: the EAL found no port …"). It is Named, so that the
// engine, which names the backend of an error that does not, leaves it
// as it is; it unwraps to Err.
type Error struct {
	// Backend is the backend's registered name.
	Backend string
	// At, when set, follows the name: the side or the object the error is
	// about ("sender", "on veth0", "receiver on lo queue 1"), as in
	// "afpacket on veth0: needs CAP_NET_RAW".
	At string
	// Err is the error, its text without the name (and At).
	Err error
}

func (e *Error) Error() string {
	if e.At != "" {
		return e.Backend + " " + e.At + ": " + e.Err.Error()
	}
	return e.Backend + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// BackendName returns Backend (Named).
func (e *Error) BackendName() string { return e.Backend }

// Errorf formats an error of backend name as fmt.Errorf does (%w wraps):
// its text is the name, a colon and the message ("afxdp: frame size 0
// must be positive").
func Errorf(name, format string, args ...any) error {
	return &Error{Backend: name, Err: fmt.Errorf(format, args...)}
}

// ErrorfAt formats an error of backend name about at, a side or an object
// ("sender", "on veth0"), as fmt.Errorf does: its text is the name, at, a
// colon and the message ("afpacket on veth0: needs CAP_NET_RAW …").
func ErrorfAt(name, at, format string, args ...any) error {
	return &Error{Backend: name, At: at, Err: fmt.Errorf(format, args...)}
}

// Name returns err as an error of backend name: its text begins with the
// name once, whichever layer the error came from. An error that names the
// backend already (NamesBackend: every backend writes its errors with
// Errorf or ErrorfAt) is returned as it is; nil stays nil. Every error a
// backend hands the engine (from Open, a sender or a receiver) goes
// through it, so that each reads "afxdp: …" (or "afpacket on veth0: …"),
// never "backend afxdp: afxdp: …" or an error without the name.
func Name(name string, err error) error {
	if err == nil || NamesBackend(err, name) {
		return err
	}
	return &Error{Backend: name, Err: err}
}
