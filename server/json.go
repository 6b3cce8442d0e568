package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
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
// The body must be one JSON object (readBody); every field that cannot be
// read is listed at once (decodeFields).
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	raw, ok := s.readBody(w, r)
	if !ok {
		return false
	}
	if fes := decodeFields(raw, v); fes != nil {
		writeJSON(w, http.StatusBadRequest, ErrorBody{Errors: fes})
		return false
	}
	return true
}

// bodyFix is the fix of a body that is not one JSON object.
const bodyFix = "send one JSON object (docs/api.md)"

// readBody reads a request body that must be one JSON object: an empty
// body, null, an array or a second value after the object is refused;
// false when it has answered (400, 408, 413).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (json.RawMessage, bool) {
	dec := json.NewDecoder(r.Body)
	var raw json.RawMessage
	err := dec.Decode(&raw)
	if err == nil && dec.More() {
		err = errors.New("more follows the JSON object")
	}
	var tooBig *http.MaxBytesError
	var syn *json.SyntaxError
	if err != nil {
		var reason string
		switch {
		case errors.As(err, &tooBig):
			writeJSON(w, http.StatusRequestEntityTooLarge, s.tooLargeBody())
			return nil, false
		case bodyTimedOut(err):
			writeJSON(w, http.StatusRequestTimeout, s.slowBody())
			return nil, false
		case errors.Is(err, io.EOF):
			reason = "the body is empty"
		case errors.Is(err, io.ErrUnexpectedEOF):
			reason = "the body is not valid JSON: it ends inside the JSON value (cut short?)"
		case errors.As(err, &syn):
			reason = fmt.Sprintf("the body is not valid JSON at byte %d: %s", syn.Offset, strings.TrimPrefix(syn.Error(), "json: "))
		default:
			reason = "the body is not valid JSON: " + err.Error()
		}
		writeJSON(w, http.StatusBadRequest, ErrorBody{Errors: []FieldError{{Reason: reason, Fix: bodyFix}}})
		return nil, false
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		writeJSON(w, http.StatusBadRequest, ErrorBody{Errors: []FieldError{{Value: jsonValueKind(t), Reason: "the body is a JSON " + jsonValueKind(t) + ", not an object", Fix: bodyFix}}})
		return nil, false
	}
	return raw, true
}

// decodeFields decodes obj, a JSON object, into v strictly, one field at
// a time, so that every field it cannot take is listed, in the object's
// order: an unknown field, or a value of the wrong type, named with the
// value given and the JSON value the field takes (not the Go type behind
// it). The fields it can take are set.
func decodeFields(obj []byte, v any) []FieldError {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // {
		return []FieldError{{Reason: "the body is not valid JSON: " + err.Error(), Fix: bodyFix}}
	}
	var fes []FieldError
	for dec.More() {
		tok, err := dec.Token()
		key, _ := tok.(string)
		var val json.RawMessage
		if err == nil {
			err = dec.Decode(&val)
		}
		if err != nil {
			return append(fes, FieldError{Reason: "the body is not valid JSON: " + err.Error(), Fix: bodyFix})
		}
		one, _ := json.Marshal(map[string]json.RawMessage{key: val})
		strict := json.NewDecoder(bytes.NewReader(one))
		strict.DisallowUnknownFields()
		if err := strict.Decode(v); err != nil {
			fes = append(fes, fieldError(err, key, val))
		}
	}
	return fes
}

// fieldError is the problem of field key, whose value val v could not
// take.
func fieldError(err error, key string, val json.RawMessage) FieldError {
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typ):
		path := strings.TrimPrefix(typ.Field, "Spec.")
		if path == "" {
			path = key
		}
		got := jsonAt(val, strings.Split(path, ".")[1:])
		fe := FieldError{Field: path, Value: valueText(got), Reason: fmt.Sprintf("is a JSON %s: want %s", typ.Value, jsonWant(typ.Type)), Fix: "see docs/api.md for the field's type"}
		if why, ok := outOfRange(typ.Type, strings.TrimPrefix(typ.Value, "number ")); ok {
			fe.Reason = why
		}
		if typ.Type == reflect.TypeFor[time.Duration]() {
			fe.Fix = "give a duration in nanoseconds (10 s = 10000000000)"
		}
		return fe
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		if name != key && !strings.Contains(name, ".") {
			name = key + "." + name
		}
		return FieldError{Field: name, Reason: "is not a field of this request", Fix: "remove it; docs/api.md lists the fields"}
	}
	return FieldError{Field: key, Value: valueText(val), Reason: "cannot be read: " + strings.TrimPrefix(err.Error(), "json: "), Fix: "see docs/api.md for the field's type"}
}

// jsonAt is the value at path (field names) inside the JSON object val;
// val itself where the path leads nowhere.
func jsonAt(val json.RawMessage, path []string) json.RawMessage {
	for _, name := range path {
		var m map[string]json.RawMessage
		if json.Unmarshal(val, &m) != nil {
			return val
		}
		next, ok := m[name]
		if !ok {
			for k, v := range m { // encoding/json matches names in any case
				if strings.EqualFold(k, name) {
					next, ok = v, true
				}
			}
		}
		if !ok {
			return val
		}
		val = next
	}
	return val
}

// maxValueText caps the value an error quotes, in bytes.
const maxValueText = 64

// valueText is a JSON value as an error quotes it: a string's text, any
// other value compacted, cut short at maxValueText bytes.
func valueText(val json.RawMessage) string {
	var s string
	if json.Unmarshal(val, &s) != nil {
		var b bytes.Buffer
		if json.Compact(&b, val) == nil {
			s = b.String()
		} else {
			s = string(bytes.TrimSpace(val))
		}
	}
	if len(s) > maxValueText {
		cut := maxValueText
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
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

// outOfRange says why the whole number n does not fit the integer type
// t, when that is why: it is a whole number, and out of t's range (a
// negative one for an unsigned type keeps its own message).
func outOfRange(t reflect.Type, n string) (string, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[time.Duration]() {
		return "", false
	}
	var lo, hi string
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if _, err := strconv.ParseInt(n, 10, t.Bits()); !errors.Is(err, strconv.ErrRange) {
			return "", false
		}
		lo, hi = strconv.FormatInt(-1<<(t.Bits()-1), 10), strconv.FormatInt(1<<(t.Bits()-1)-1, 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if _, err := strconv.ParseUint(n, 10, t.Bits()); !errors.Is(err, strconv.ErrRange) {
			return "", false
		}
		lo, hi = "0", strconv.FormatUint(1<<t.Bits()-1, 10)
	default:
		return "", false
	}
	return fmt.Sprintf("is out of range: want a whole number from %s to %s", lo, hi), true
}
