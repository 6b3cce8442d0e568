// Package inputerr is the one way wpg's errors say how to put them right.
// A Fixer is an error whose text names its remedy and whose Fix repeats
// it, so that each client shows it its own way: the CLI on one line (and
// adds no generic advice of its own), the API in the fix of a 400
// (job.OptionError carries it). Error is the error of a parser of one
// input value (a rate, a wait mode, a backend name) that also says apart
// what is wrong ("--wait nap: is not a wait mode; use hybrid, spin or
// sleep"); WithFix marks any other error whose text already names its
// remedy (the capability to grant, the limit to raise).
package inputerr

import "errors"

// Fixer is an error that names its own remedy: its text says how to fix
// it, and Fix repeats the remedy for callers that show it apart. A caller
// that adds general advice to an error (the CLI, for os.ErrPermission)
// leaves a Fixer alone: it asks errors.As for one instead of reading the
// text.
type Fixer interface {
	error
	// Fix is the remedy the error's text already names.
	Fix() string
}

// Fixed is an error whose message already says how to fix it (see
// WithFix); Fix repeats the remedy. Its text is Err's.
type Fixed struct {
	Err    error
	Remedy string
}

// WithFix marks err as naming its own remedy fix (a Fixer); nil stays nil.
func WithFix(err error, fix string) error {
	if err == nil {
		return nil
	}
	return &Fixed{Err: err, Remedy: fix}
}

func (e *Fixed) Error() string { return e.Err.Error() }

// Unwrap returns the error it marks.
func (e *Fixed) Unwrap() error { return e.Err }

// Fix returns the remedy.
func (e *Fixed) Fix() string { return e.Remedy }

// Error is a bad input value: Why is what is wrong, phrased after the
// value ("is not a wait mode"), Remedy how to fix it ("use hybrid, spin or
// sleep"); Err, when set, is the sentinel errors.Is finds (pace.ErrBadRate).
// Text, when set, is the message as one line (a parser's long-standing
// wording); else the message is Subject, Why and Remedy.
type Error struct {
	// Subject names the value in the message ("wait mode \"nap\"").
	Subject string
	Why     string
	Remedy  string
	Text    string
	Err     error
}

// New returns an Error about subject (may be ""), wrapping sentinel (may
// be nil).
func New(sentinel error, subject, why, remedy string) *Error {
	return &Error{Subject: subject, Why: why, Remedy: remedy, Err: sentinel}
}

// Worded returns an Error whose message is text, with why and remedy
// apart for the clients that show them apart.
func Worded(sentinel error, text, why, remedy string) *Error {
	return &Error{Text: text, Why: why, Remedy: remedy, Err: sentinel}
}

// Error is the whole message: Text, or the subject, what is wrong and the
// fix.
func (e *Error) Error() string {
	if e.Text != "" {
		return e.Text
	}
	s := e.Why
	if e.Subject != "" {
		s = e.Subject + " " + s
	}
	if e.Remedy != "" {
		s += "; " + e.Remedy
	}
	return s
}

// Reason is what is wrong, without the subject and the fix.
func (e *Error) Reason() string { return e.Why }

// Fix is how to put it right (it makes the error a Fixer: its text names
// its remedy).
func (e *Error) Fix() string { return e.Remedy }

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

// Split is a Fixer that also says what is wrong apart.
type Split interface {
	Fixer
	Reason() string
}

// As returns the Split in err's chain, or nil.
func As(err error) Split {
	var s Split
	if errors.As(err, &s) {
		return s
	}
	return nil
}
