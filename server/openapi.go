package server

import (
	"bytes"
	_ "embed"
	"encoding"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/wpg-dev/wpg/report"
)

// The OpenAPI 3 document of the HTTP API (GET /api/v1/openapi.json) is
// openapi.json, written by hand: the paths, their parameters, statuses,
// headers and examples, with what each means. The schemas of the bodies
// the API reads and writes are generated from their Go types (their JSON
// names, types and omitempty), so that the 60 options of a job spec and the
// fields of a job or a report cannot drift from the document; openapi_test
// checks the rest: each route served is documented and each documented
// route served, every example valid against its schema, and the answers of
// a live server too.

//go:embed openapi.json
var openAPIJSON []byte

// apiTypes are the bodies whose schemas OpenAPI generates, by the name
// openapi.json's $refs give them (#/components/schemas/NAME).
var apiTypes = map[string]struct {
	v       any
	request bool // a request body: no field is required, unknown ones are refused
}{
	"CreateRequest":   {CreateRequest{}, true},
	"PreviewRequest":  {PreviewRequest{}, true},
	"JobView":         {JobView{}, false},
	"SnapshotView":    {SnapshotView{}, false},
	"Sample":          {Sample{}, false},
	"ErrorBody":       {ErrorBody{}, false},
	"PreviewResponse": {PreviewResponse{}, false},
	"BackendInfo":     {BackendInfo{}, false},
	"Report":          {report.Report{}, false},
}

var openAPI = sync.OnceValues(func() ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(openAPIJSON, &doc); err != nil {
		return nil, fmt.Errorf("openapi.json: %w", err)
	}
	comps, _ := doc["components"].(map[string]any)
	if comps == nil {
		return nil, fmt.Errorf("openapi.json: no components")
	}
	schemas, _ := comps["schemas"].(map[string]any)
	if schemas == nil {
		schemas = map[string]any{}
		comps["schemas"] = schemas
	}
	for name, t := range apiTypes {
		if _, ok := schemas[name]; ok {
			return nil, fmt.Errorf("openapi.json: schema %s is generated from its Go type: leave it out", name)
		}
		schemas[name] = schemaOf(reflect.TypeOf(t.v), t.request, map[reflect.Type]bool{})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
})

// OpenAPI returns the OpenAPI 3 document of the HTTP API, as
// GET /api/v1/openapi.json serves it.
func OpenAPI() ([]byte, error) { return openAPI() }

func (s *Server) handleOpenAPI(w http.ResponseWriter, _ *http.Request) {
	doc, err := openAPI()
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, apiError("the OpenAPI document: "+err.Error(), "report this: the build's openapi.json is broken", 0))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(doc)
}

var (
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
)

// schemaOf is the OpenAPI schema (3.0: nullable) of how encoding/json
// writes or reads a value of type t. A struct's fields are its JSON names,
// those without omitempty required in a response; no other field is
// allowed. seen breaks cycles.
func schemaOf(t reflect.Type, request bool, seen map[reflect.Type]bool) map[string]any {
	switch {
	case t == reflect.TypeFor[time.Time]():
		return map[string]any{"type": "string", "format": "date-time"}
	case t == reflect.TypeFor[time.Duration]():
		return map[string]any{"type": "integer", "description": "nanoseconds"}
	case t == reflect.TypeFor[json.RawMessage]():
		return map[string]any{"description": "any JSON value"}
	case t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler):
		return map[string]any{"description": "any JSON value (" + t.String() + ")"}
	case t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler):
		return map[string]any{"type": "string"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		s := schemaOf(t.Elem(), request, seen)
		s["nullable"] = true
		return s
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer", "minimum": 0}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "format": "byte"}
		}
		return map[string]any{"type": "array", "items": schemaOf(t.Elem(), request, seen), "nullable": true}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem(), request, seen), "nullable": true}
	case reflect.Struct:
		if seen[t] {
			return map[string]any{"type": "object"}
		}
		seen[t] = true
		defer delete(seen, t)
		props, required := map[string]any{}, []string{}
		structFields(t, request, seen, props, &required)
		s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			s["required"] = required
		}
		return s
	}
	return map[string]any{}
}

// structFields adds the JSON fields of struct t to props (and, in a
// response, those without omitempty to required); an embedded struct
// without a JSON name gives its own, as encoding/json does.
func structFields(t reflect.Type, request bool, seen map[reflect.Type]bool, props map[string]any, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				structFields(ft, request, seen, props, required)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		props[name] = schemaOf(f.Type, request, seen)
		if !request && !strings.Contains(opts, "omitempty") {
			*required = append(*required, name)
		}
	}
}
