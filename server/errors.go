package server

import (
	"errors"
	"fmt"
	"strings"

	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/template"
)

// FieldError is one problem of a request, as 400 responses list them:
// job.OptionError's fields, and for templates the line and column.
type FieldError struct {
	Field  string `json:"field"`
	Value  string `json:"value"`
	Reason string `json:"reason"`
	Fix    string `json:"fix"`
	Line   int    `json:"line,omitempty"`
	Col    int    `json:"col,omitempty"`
	Path   string `json:"path,omitempty"`
}

// ErrorBody is the body of every error response, whatever its status:
// Errors lists the problems (one for a status other than 400), each with
// its reason and its fix apart; Error is the same in one line (the
// problems' "field value: reason: fix", joined by "; "), for a client that
// shows one message; Job names the job the error is about (409, and 404
// for a job without a report).
type ErrorBody struct {
	Errors []FieldError `json:"errors"`
	Error  string       `json:"error"`
	Job    int64        `json:"job,omitempty"`
}

// apiError is the body of an error about no one field: what is wrong
// (reason) and what to do (fix), about job (0: none).
func apiError(reason, fix string, job int64) ErrorBody {
	return ErrorBody{Errors: []FieldError{{Reason: reason, Fix: fix}}, Job: job}
}

// dbError is the body of a job database failure (500).
func dbError(err error) ErrorBody {
	return apiError("job database: "+err.Error(), "try again; if it goes on, check the disk and the file wpg serve --db names (its log says more)", 0)
}

// line is the problems of b in one line.
func (b ErrorBody) line() string {
	parts := make([]string, 0, len(b.Errors))
	for _, e := range b.Errors {
		head := strings.TrimSpace(e.Field + " " + e.Value)
		if e.Field != "" && e.Value != "" {
			head = fmt.Sprintf("%s %q", e.Field, e.Value)
		}
		var msg []string
		for _, s := range []string{head, e.Reason, e.Fix} {
			if s != "" {
				msg = append(msg, s)
			}
		}
		parts = append(parts, strings.Join(msg, ": "))
	}
	return strings.Join(parts, "; ")
}

func (s *Server) tooLarge() string {
	return fmt.Sprintf("request body over %d bytes: send less (a template of at most %d bytes)", s.opt.MaxBody, s.opt.MaxBody)
}

func (s *Server) tooLargeBody() ErrorBody {
	return apiError(fmt.Sprintf("request body over %d bytes", s.opt.MaxBody), fmt.Sprintf("send less (a template of at most %d bytes)", s.opt.MaxBody), 0)
}

// jsonNames writes the {field} placeholders of a job.OptionError's
// reason and fix as the field's JSON name, the name a client of this API
// gives ("give {fifo}" is "give fifo"; the CLI writes "--fifo"). Braces
// around anything but a field name stay as they are.
func jsonNames(s string) string {
	if !strings.Contains(s, "{") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+1:], '}')
		if j < 0 {
			break
		}
		name := s[i+1 : i+1+j]
		b.WriteString(s[:i])
		if isFieldName(name) {
			b.WriteString(name)
		} else {
			b.WriteString(s[i : i+2+j])
		}
		s = s[i+2+j:]
	}
	b.WriteString(s)
	return b.String()
}

// isFieldName says whether s looks like a JSON field name of a job spec:
// lower-case letters, digits and underscores, starting with a letter.
func isFieldName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// templateFix is the fix of a template error that names none: where to
// look.
func templateFix(te *template.Error) string {
	if te.Line > 0 {
		return fmt.Sprintf("correct the template at line %d, column %d (docs/templates.md)", te.Line, te.Col)
	}
	return "correct the template (docs/templates.md)"
}

// withTemplate puts the position of template error te into fe and, unless
// fe has a reason of its own (own), te's reason and fix apart, where the
// error's one line has both; a fix te does not give says where to look.
func withTemplate(fe *FieldError, te *template.Error, own bool) {
	fe.Line, fe.Col, fe.Path = te.Line, te.Col, te.Path
	if !own {
		switch {
		case te.Msg != "":
			fe.Reason = te.Msg
		case te.Err != nil:
			fe.Reason = te.Err.Error()
		}
		fe.Fix = te.Fix()
	}
	if fe.Fix == "" {
		fe.Fix = templateFix(te)
	}
}

func problemsBody(ps job.Problems) ErrorBody {
	b := ErrorBody{}
	for _, p := range ps {
		fe := FieldError{Field: p.Field, Value: p.Value, Reason: jsonNames(p.Reason), Fix: jsonNames(p.Fix)}
		if fe.Reason == "" && p.Err != nil {
			fe.Reason = p.Err.Error()
		}
		var te *template.Error
		if errors.As(p.Err, &te) {
			withTemplate(&fe, te, p.Reason != "")
		}
		b.Errors = append(b.Errors, fe)
	}
	return b
}

func templateErrors(err error) ErrorBody {
	fe := FieldError{Field: "template", Reason: err.Error()}
	var te *template.Error
	if errors.As(err, &te) {
		withTemplate(&fe, te, false)
	}
	if fe.Fix == "" {
		fe.Fix = "correct the template (docs/templates.md)"
	}
	return ErrorBody{Errors: []FieldError{fe}}
}
