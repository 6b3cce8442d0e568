// Package inputerr is the error of a parser of one input value (a rate,
// a wait mode, a backend name) that says apart what is wrong and how to
// put it right, so that each client shows them its own way: the CLI on
// one line ("--wait nap: is not a wait mode; use hybrid, spin or sleep"),
// the API in the reason and fix of a 400 (job.OptionError carries both).
package inputerr

import "errors"

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

// Fix is how to put it right (it also makes the error a backend.Fixer:
// its text names its remedy).
func (e *Error) Fix() string { return e.Remedy }

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

// Split is what an error that says its reason and fix apart offers.
type Split interface {
	error
	Reason() string
	Fix() string
}

// As returns the Split in err's chain, or nil.
func As(err error) Split {
	var s Split
	if errors.As(err, &s) {
		return s
	}
	return nil
}
