package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"time"
)

func writeJSON(w http.ResponseWriter, code int, v any) {
	if eb, ok := v.(ErrorBody); ok && eb.Error == "" {
		eb.Error = eb.line()
		v = eb
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b) // escapes <, > and &
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		code = http.StatusInternalServerError
		b.Reset()
		fmt.Fprintf(&b, "{\"errors\": [{\"reason\": %q, \"fix\": \"report it: this is a bug\"}], \"error\": %q}\n", err.Error(), err.Error())
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(b.Bytes())
}

// decode reads a JSON body into v strictly; false when it has answered.
// The body must be one JSON object: an empty body, null, an array or a
// second value after the object is refused, and a field of the wrong type
// is named with the JSON value the field takes, not the Go type behind it.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	var raw json.RawMessage
	err := dec.Decode(&raw)
	if err == nil && dec.More() {
		err = errors.New("more follows the JSON object")
	}
	var tooBig *http.MaxBytesError
	var syn *json.SyntaxError
	fix := "send one JSON object (docs/api.md)"
	if err != nil {
		var reason string
		switch {
		case errors.As(err, &tooBig):
			writeJSON(w, http.StatusRequestEntityTooLarge, s.tooLargeBody())
			return false
		case bodyTimedOut(err):
			writeJSON(w, http.StatusRequestTimeout, s.slowBody())
			return false
		case errors.Is(err, io.EOF):
			reason = "the body is empty"
		case errors.Is(err, io.ErrUnexpectedEOF):
			reason = "the body is not valid JSON: it ends inside the JSON value (cut short?)"
		case errors.As(err, &syn):
			reason = fmt.Sprintf("the body is not valid JSON at byte %d: %s", syn.Offset, strings.TrimPrefix(syn.Error(), "json: "))
		default:
			reason = "the body is not valid JSON: " + err.Error()
		}
		writeJSON(w, http.StatusBadRequest, ErrorBody{Errors: []FieldError{{Reason: reason, Fix: fix}}})
		return false
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		writeJSON(w, http.StatusBadRequest, ErrorBody{Errors: []FieldError{{Value: jsonValueKind(t), Reason: "the body is a JSON " + jsonValueKind(t) + ", not an object", Fix: fix}}})
		return false
	}
	strict := json.NewDecoder(bytes.NewReader(raw))
	strict.DisallowUnknownFields()
	err = strict.Decode(v)
	if err == nil {
		return true
	}
	var typ *json.UnmarshalTypeError
	fe := FieldError{Reason: "the body is not valid JSON: " + err.Error(), Fix: fix}
	switch {
	case errors.As(err, &typ):
		fe = FieldError{Field: strings.TrimPrefix(typ.Field, "Spec."), Value: typ.Value, Reason: fmt.Sprintf("is a JSON %s: want %s", typ.Value, jsonWant(typ.Type)), Fix: "see docs/api.md for the field's type"}
		if typ.Type == reflect.TypeFor[time.Duration]() {
			fe.Fix = "give a duration in nanoseconds (10 s = 10000000000)"
		}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		fe = FieldError{Field: name, Reason: "is not a field of this request", Fix: "remove it; docs/api.md lists the fields"}
	}
	writeJSON(w, http.StatusBadRequest, ErrorBody{Errors: []FieldError{fe}})
	return false
}

// jsonValueKind names the JSON value that starts t (trimmed).
func jsonValueKind(t []byte) string {
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// jsonWant is the JSON value a field of Go type t takes, as a client of
// the API writes it.
func jsonWant(t reflect.Type) string {
	if t == reflect.TypeFor[time.Duration]() {
		return "a whole number of nanoseconds"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number from 0"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}
