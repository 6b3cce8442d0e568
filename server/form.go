package server

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/wpg-dev/wpg/job"
	wpgtemplate "github.com/wpg-dev/wpg/template"
)

func formBool(v string) bool { return v == "on" || v == "true" || v == "1" }

// formOf fills the new-job form from job id's spec (run again).
func (s *Server) formOf(r *http.Request, id int64) url.Values {
	rec, err := s.store.Get(r.Context(), id)
	if err != nil || rec == nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal([]byte(rec.Spec), &m) != nil {
		return nil
	}
	var spec job.Spec
	json.Unmarshal([]byte(rec.Spec), &spec)
	b := spec.BackendName()
	form := url.Values{"name": {rec.Name}, "backend": {b}, "template_text": {string(wpgtemplate.DefaultYAML())}}
	common := map[string]bool{}
	for _, c := range commonFields {
		common[c] = true
	}
	for k, v := range m {
		str := fmt.Sprint(v)
		if k == "duration" {
			if f, ok := v.(float64); ok {
				str = time.Duration(f).String()
			}
		}
		if k == "limits" || k == "command" {
			continue
		}
		if common[k] || k == "template_text" {
			form.Set(k, str)
		} else {
			form.Set("opt."+b+"."+k, str)
		}
	}
	if bv, ok := m["auto_pin"].(bool); ok && bv {
		form.Set("auto_pin", "on")
	}
	return form
}

// commonFields are the job.Spec fields the new-job form shows for every
// backend (the backends' own come from their registrations).
var commonFields = []string{"rate", "count", "duration", "workers", "cores", "auto_pin", "batch", "size", "start_receiver"}

// requestOf turns the new-job form into a CreateRequest: the form's
// values become the JSON fields of a job.Spec (by their JSON names and
// Go types) and go through the API's strict decoder, so the form and
// POST /api/v1/jobs accept exactly the same jobs. The problems are the
// values it could not read; the spec has the others.
func (s *Server) requestOf(form url.Values) (CreateRequest, []FieldError) {
	m := map[string]any{}
	var fes []FieldError
	fields := specFields()
	backendName := strings.TrimSpace(form.Get("backend"))
	put := func(name, v string) {
		v = strings.TrimSpace(v)
		f, ok := fields[name]
		if !ok || v == "" {
			return
		}
		x, fe := formValue(name, f.Type, v)
		if fe != nil {
			fes = append(fes, *fe)
			return
		}
		if x != nil {
			m[name] = x
		}
	}
	if backendName != "" {
		m["backend"] = backendName
	}
	for _, c := range commonFields {
		put(c, form.Get(c))
	}
	pfx := "opt." + backendName + "."
	for k, vs := range form {
		if strings.HasPrefix(k, pfx) && len(vs) > 0 {
			put(strings.TrimPrefix(k, pfx), vs[len(vs)-1])
		}
	}
	tt := strings.ReplaceAll(form.Get("template_text"), "\r\n", "\n")
	if strings.TrimSpace(tt) != "" && tt != string(wpgtemplate.DefaultYAML()) {
		m["template_text"] = tt
	}
	req := CreateRequest{Spec: job.NewSpec(), Name: strings.TrimSpace(form.Get("name")), StartedBy: strings.TrimSpace(form.Get("started_by"))}
	data, err := json.Marshal(m)
	if err != nil {
		return req, append(fes, FieldError{Reason: err.Error()})
	}
	// The values it could read go in, so that the caller can check the
	// rest of the job (problemsWith) and list every problem at once.
	return req, append(fes, decodeFields(data, &req.Spec)...)
}

var durationType = reflect.TypeFor[time.Duration]()

// formValue converts one form value to the JSON value of a Spec field of
// type t: "" and unticked boxes are left out.
func formValue(name string, t reflect.Type, v string) (any, *FieldError) {
	bad := func(want, eg string) *FieldError {
		return &FieldError{Field: name, Value: v, Reason: "is not " + want, Fix: "e.g. " + eg}
	}
	if t == durationType {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return nil, bad("a duration", "10s, 1m30s or 500ms")
		}
		return int64(d), nil
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		if formBool(v) {
			return true, nil
		}
		return nil, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(v, 10, 64)
		if why, ok := outOfRange(t, v); ok {
			return nil, &FieldError{Field: name, Value: v, Reason: why, Fix: "e.g. 4"}
		}
		if err != nil {
			return nil, bad("a whole number", "4")
		}
		return n, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(v, 10, 64)
		if why, ok := outOfRange(t, v); ok {
			return nil, &FieldError{Field: name, Value: v, Reason: why, Fix: "e.g. 100000"}
		}
		if err != nil {
			return nil, bad("a whole number from 0", "100000")
		}
		return n, nil
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, bad("a number", "0.9")
		}
		return f, nil
	case reflect.String:
		return v, nil
	}
	return nil, &FieldError{Field: name, Value: v, Reason: "cannot be set from the form", Fix: "use POST /api/v1/jobs (docs/api.md)"}
}

// inputType is the HTML input type of a Spec field's Go type.
func inputType(t reflect.Type) string {
	if t == durationType {
		return "text"
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "checkbox"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "number"
	}
	return "text"
}

// specFields maps job.Spec's JSON names to its fields.
func specFields() map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	t := reflect.TypeFor[job.Spec]()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		out[name] = f
	}
	return out
}
