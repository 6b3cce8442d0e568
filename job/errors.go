package job

import (
	"errors"
	"strings"

	"github.com/wpg-dev/wpg/internal/inputerr"
)

// OptionError is one problem with one field of a Spec or RecvSpec, found
// before anything runs. Field is the field's JSON name ("rate",
// "pin_cores", "output"), so that each client can name it its own way: the
// CLI maps it to a flag, a web form to its input.
//
// Reason and Fix may name other fields as {field} (e.g. "add {rate}"):
// Format replaces each with the caller's name for it, Error with the JSON
// name.
type OptionError struct {
	// Field is the JSON name of the field at fault; "template" for the
	// template itself.
	Field string
	// Value is the offending value as given, or "" where showing it adds
	// nothing (a flag that is merely set).
	Value string
	// Reason says what is wrong. After the field and Value it reads
	// "FIELD VALUE: REASON"; without a Value, "FIELD REASON".
	Reason string
	// Fix says how to put it right. Every OptionError of Validate has
	// one (a client shows it apart: the API's fix).
	Fix string
	// Err is the underlying error, if any (a parser's, a template's). An
	// OptionError with Err and neither Value nor Reason shows Err's text
	// as it is: that text names the setting itself.
	Err error

	// fixInErr: Reason is empty and Err's text already names Fix (a
	// template's error, a inputerr.Fixer), so Format does not repeat it.
	fixInErr bool
}

// Error formats the problem with the JSON field names.
func (e *OptionError) Error() string {
	same := func(f string) string { return f }
	return e.Format(same, same)
}

// Unwrap returns the underlying error.
func (e *OptionError) Unwrap() error { return e.Err }

// Format formats the problem on one line: head names the field at fault
// at the start ("-o/--output"), mention the fields that Reason and Fix
// name ("-o"). Either returns "" for a field that has no name of its own
// (the CLI's template argument).
func (e *OptionError) Format(head, mention func(field string) string) string {
	msg := expand(e.Reason, mention)
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if e.Fix != "" && !(e.fixInErr && e.Reason == "") {
		msg += "; " + expand(e.Fix, mention)
	}
	return e.withHead(head(e.Field), msg)
}

func (e *OptionError) withHead(head, msg string) string {
	switch {
	case head == "" || (e.Value == "" && e.Reason == ""):
		return msg
	case e.Value != "":
		return head + " " + e.Value + ": " + msg
	}
	return head + " " + msg
}

// expand replaces each {field} in s with name(field).
func expand(s string, name func(string) string) string {
	if !strings.Contains(s, "{") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '{')
		j := -1
		if i >= 0 {
			j = strings.IndexByte(s[i+1:], '}')
		}
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		f := s[i+1 : i+1+j]
		if n := name(f); n != "" {
			b.WriteString(n)
		} else {
			b.WriteString(f)
		}
		s = s[i+2+j:]
	}
}

// Problems is every problem Validate found, in the order of the Spec's
// checks. errors.As(err, &oe) finds the first *OptionError; range over
// the slice for all of them.
type Problems []*OptionError

// Error joins the problems with "; ".
func (p Problems) Error() string {
	s := make([]string, len(p))
	for i, e := range p {
		s[i] = e.Error()
	}
	return strings.Join(s, "; ")
}

// Unwrap returns the problems, for errors.Is and errors.As.
func (p Problems) Unwrap() []error {
	errs := make([]error, len(p))
	for i, e := range p {
		errs[i] = e
	}
	return errs
}

// AsProblems returns the problems in err (a Problems, or one
// *OptionError), or nil when err holds none.
func AsProblems(err error) Problems {
	var p Problems
	if errors.As(err, &p) {
		return p
	}
	var oe *OptionError
	if errors.As(err, &oe) {
		return Problems{oe}
	}
	return nil
}

// problems collects OptionErrors.
type problems struct{ list Problems }

func (p *problems) add(field, value, reason, fix string) {
	p.list = append(p.list, &OptionError{Field: field, Value: value, Reason: reason, Fix: fix})
}

// wrap adds err, a parser's or a loader's error about field: its reason
// and fix apart when it says them apart (inputerr), the remedy its text
// names when it names one (a template's error, a inputerr.Fixer), else fix,
// the caller's remedy.
func (p *problems) wrap(field, value string, err error, fix string) {
	p.list = append(p.list, wrapped(field, value, err, fix))
}

func wrapped(field, value string, err error, fix string) *OptionError {
	oe := &OptionError{Field: field, Value: value, Err: err, Fix: fix}
	var fixer inputerr.Fixer
	switch s := inputerr.As(err); {
	case s != nil && s.Reason() != "" && s.Fix() != "":
		oe.Reason, oe.Fix = s.Reason(), s.Fix()
	case errors.As(err, &fixer) && fixer.Fix() != "":
		oe.Fix, oe.fixInErr = fixer.Fix(), true
	}
	return oe
}

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return p.list
}
