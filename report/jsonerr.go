package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// JSONError says where in b the JSON decoding failed (line:column) and
// what was wrong in the report's own terms: a syntax error, the document
// ending early, or a field of the wrong type named by its JSON path, not
// by the Go type it was to fill.
func JSONError(b []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(b, syn.Offset)
		if syn.Offset >= int64(len(b)) || strings.Contains(syn.Error(), "unexpected end") {
			return fmt.Errorf("line %d, column %d: the JSON ends early (was the file cut short?)", line, col)
		}
		if jsonStream(b) {
			return fmt.Errorf("line %d, column %d: a --json-stream log (one JSON object a line), not a report: give the JSON that --json wrote, or the data of the log's last line, its end event (jq .data of it)", line, col)
		}
		return fmt.Errorf("line %d, column %d: %s", line, col, strings.TrimPrefix(syn.Error(), "json: "))
	case errors.As(err, &typ):
		line, col := lineCol(b, valueStart(b, typ.Offset))
		if typ.Field == "" {
			return fmt.Errorf("line %d, column %d: the document is a JSON %s: a wpg report is an object with a \"schema\" field", line, col, typ.Value)
		}
		return fmt.Errorf("line %d, column %d: field %q is a JSON %s: want %s", line, col, typ.Field, typ.Value, jsonKind(typ.Type.Kind().String()))
	}
	return err
}

// jsonKind names a Go kind as the JSON value that fills it.
func jsonKind(k string) string {
	switch {
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"), strings.HasPrefix(k, "float"):
		return "a number"
	case k == "string":
		return "a string"
	case k == "bool":
		return "true or false"
	case k == "slice", k == "array":
		return "an array"
	}
	return "an object"
}

// valueStart is where the JSON value that ends at off begins (the
// decoder reports a type error after the value).
func valueStart(b []byte, off int64) int64 {
	off = min(max(off, 0), int64(len(b)))
	if off == 0 {
		return 0
	}
	switch c := b[off-1]; {
	case c == '[' || c == '{':
		return off - 1
	case c == '"':
		for i := off - 2; i >= 0; i-- {
			if b[i] == '"' && (i == 0 || b[i-1] != '\\') {
				return i
			}
		}
		return 0
	}
	i := off
	for i > 0 && !strings.ContainsRune(",:[{ \t\r\n", rune(b[i-1])) {
		i--
	}
	return i
}

// lineCol turns a byte offset of b into a 1-based line and column.
func lineCol(b []byte, off int64) (int, int) {
	off = min(max(off, 0), int64(len(b)))
	head := b[:off]
	line := 1 + bytes.Count(head, []byte("\n"))
	col := int(off) - (bytes.LastIndexByte(head, '\n') + 1) + 1
	return line, col
}

// jsonStream reports whether b begins with an event of --json-stream's
// log ({"event": …, "data": …}) followed by more.
func jsonStream(b []byte) bool {
	d := json.NewDecoder(bytes.NewReader(b))
	var ev struct {
		Event *string         `json:"event"`
		Data  json.RawMessage `json:"data"`
	}
	return d.Decode(&ev) == nil && ev.Event != nil && d.More()
}
