//go:build linux

package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// schemaChecker checks JSON values against the schemas of an OpenAPI 3.0
// document, for the part of JSON Schema the document uses: $ref, allOf,
// type (with nullable), properties, required, additionalProperties, items,
// enum, minimum and maximum.
type schemaChecker struct{ doc map[string]any }

func (c schemaChecker) resolve(s map[string]any) map[string]any {
	for {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		var cur any = c.doc
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			m, _ := cur.(map[string]any)
			cur = m[part]
		}
		next, ok := cur.(map[string]any)
		if !ok {
			return map[string]any{"not": "resolvable: " + ref}
		}
		s = next
	}
}

// check returns the problems of v against schema s, each at its path.
func (c schemaChecker) check(s map[string]any, v any, path string) []string {
	s = c.resolve(s)
	if why, ok := s["not"].(string); ok {
		return []string{path + ": schema " + why}
	}
	var errs []string
	fail := func(f string, args ...any) { errs = append(errs, path+": "+fmt.Sprintf(f, args...)) }
	if all, ok := s["allOf"].([]any); ok {
		if v == nil && s["nullable"] == true {
			return nil
		}
		for _, sub := range all {
			errs = append(errs, c.check(sub.(map[string]any), v, path)...)
		}
	}
	if v == nil {
		if t, ok := s["type"]; ok && s["nullable"] != true {
			fail("null, want %v", t)
		}
		return errs
	}
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, v) {
		fail("%v is not one of %v", v, enum)
	}
	switch t, _ := s["type"].(string); t {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			fail("%T, want an object", v)
			return errs
		}
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			if _, ok := m[r.(string)]; !ok {
				fail("lacks the required %q", r)
			}
		}
		for k, x := range m {
			if p, ok := props[k].(map[string]any); ok {
				errs = append(errs, c.check(p, x, path+"."+k)...)
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					fail("has %q, which the schema does not name", k)
				}
			case map[string]any:
				errs = append(errs, c.check(ap, x, path+"."+k)...)
			}
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			fail("%T, want an array", v)
			return errs
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, x := range a {
				errs = append(errs, c.check(items, x, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	case "string":
		if _, ok := v.(string); !ok {
			fail("%T %v, want a string", v, v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			fail("%T %v, want a boolean", v, v)
		}
	case "integer", "number":
		n, ok := v.(float64)
		switch {
		case !ok:
			fail("%T %v, want a %s", v, v, t)
		case t == "integer" && n != math.Trunc(n):
			fail("%v is not a whole number", n)
		case s["minimum"] != nil && n < s["minimum"].(float64):
			fail("%v is below the minimum %v", n, s["minimum"])
		case s["maximum"] != nil && n > s["maximum"].(float64):
			fail("%v is above the maximum %v", n, s["maximum"])
		}
	}
	return errs
}

// the returns the value at path (object keys) in the document.
func (c schemaChecker) at(path ...string) map[string]any {
	var cur any = c.doc
	for _, p := range path {
		m, _ := cur.(map[string]any)
		cur = m[p]
	}
	m, _ := cur.(map[string]any)
	return m
}

func loadOpenAPI(t *testing.T) schemaChecker {
	t.Helper()
	data, err := OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return schemaChecker{doc}
}

// registeredRoutes are the method patterns server/*.go registers on a mux
// (mux.HandleFunc("GET /api/v1/jobs", …), mux.Handle(…)), read from the
// source: every route the server serves, whoever adds it.
func registeredRoutes(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob("*.go")
	var routes []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "HandleFunc" && sel.Sel.Name != "Handle") {
				return true
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				p, _ := strconv.Unquote(lit.Value)
				routes = append(routes, p)
			}
			return true
		})
	}
	if len(routes) < 10 {
		t.Fatalf("found %d routes in server/*.go: %q", len(routes), routes)
	}
	return routes
}

// apiRoute reports whether a registered pattern is of the HTTP API (not the
// web UI's pages, not the /api/v1/ catch-all that answers 404).
func apiRoute(pattern string) (method, path string, ok bool) {
	method, path, found := strings.Cut(pattern, " ")
	if !found {
		return "", "", false
	}
	return method, path, strings.HasPrefix(path, "/api/") || path == "/healthz" || path == "/metrics"
}

// TestOpenAPIDocumentsEveryRoute (issue #28): every API route registered
// on the mux is in the document, and every operation of the document is
// a route registered; the document is served at /api/v1/openapi.json.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	c := loadOpenAPI(t)
	paths := c.at("paths")
	registered := map[string]bool{}
	for _, r := range registeredRoutes(t) {
		method, path, ok := apiRoute(r)
		if !ok {
			continue
		}
		registered[method+" "+path] = true
		if op := c.at("paths", path, strings.ToLower(method)); op == nil {
			t.Errorf("route %q is served, and openapi.json does not document it", r)
		}
	}
	for path, item := range paths {
		for method := range item.(map[string]any) {
			if !registered[strings.ToUpper(method)+" "+path] {
				t.Errorf("openapi.json documents %s %s, which no mux registers", strings.ToUpper(method), path)
			}
		}
	}
	ts := newTest(t, Options{})
	code, data := ts.do("GET", "/api/v1/openapi.json", nil)
	var served map[string]any
	if code != http.StatusOK || json.Unmarshal(data, &served) != nil || served["openapi"] != "3.0.3" {
		t.Errorf("GET /api/v1/openapi.json: %d %.200s", code, data)
	}
}

// operations lists the document's operations as "METHOD PATH".
func operations(c schemaChecker) []string {
	var ops []string
	for path, item := range c.at("paths") {
		for method := range item.(map[string]any) {
			ops = append(ops, strings.ToUpper(method)+" "+path)
		}
	}
	slices.Sort(ops)
	return ops
}

// TestOpenAPIExamplesValid: every example of a request or a response in
// the document is valid against its schema.
func TestOpenAPIExamplesValid(t *testing.T) {
	c := loadOpenAPI(t)
	n := 0
	checkContent := func(where string, content map[string]any) {
		for mt, m := range content {
			media := m.(map[string]any)
			schema, _ := media["schema"].(map[string]any)
			if schema == nil {
				t.Errorf("%s %s: no schema", where, mt)
				continue
			}
			exs := map[string]any{}
			if ex, ok := media["example"]; ok {
				exs["example"] = ex
			}
			if m, ok := media["examples"].(map[string]any); ok {
				for k, e := range m {
					exs[k] = e.(map[string]any)["value"]
				}
			}
			for name, ex := range exs {
				n++
				for _, e := range c.check(schema, ex, "") {
					t.Errorf("%s %s example %q: %s", where, mt, name, e)
				}
			}
		}
	}
	for _, op := range operations(c) {
		method, path, _ := strings.Cut(op, " ")
		o := c.at("paths", path, strings.ToLower(method))
		if rb, ok := o["requestBody"].(map[string]any); ok {
			checkContent(op+" request", rb["content"].(map[string]any))
		}
		for status, r := range o["responses"].(map[string]any) {
			resp := c.resolve(r.(map[string]any))
			if content, ok := resp["content"].(map[string]any); ok {
				checkContent(op+" "+status, content)
			}
		}
	}
	if n < 30 {
		t.Errorf("checked %d examples; the document has more", n)
	}
}

// TestOpenAPIStatusesOfDocsAPI: each status docs/api.md's table lists for
// the API (303 is the web UI's; 405 answers a method the document has no
// operation for, so no operation lists it) is in the document, with
// Retry-After on 429.
func TestOpenAPIStatusesOfDocsAPI(t *testing.T) {
	c := loadOpenAPI(t)
	doc, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]bool{}
	for _, op := range operations(c) {
		method, path, _ := strings.Cut(op, " ")
		for status := range c.at("paths", path, strings.ToLower(method), "responses") {
			in[status] = true
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^\| (\d{3}) [A-Z]`).FindAllStringSubmatch(string(doc), -1) {
		if m[1] != "303" && m[1] != "405" && !in[m[1]] {
			t.Errorf("docs/api.md lists status %s; no operation of openapi.json answers it", m[1])
		}
	}
	if c.at("components", "responses", "TooManyRequests", "headers", "Retry-After") == nil {
		t.Error("429 without its Retry-After header")
	}
}

// TestOpenAPIAnswersOfALiveServer: a live server's answer to a request of
// every operation has a status the document lists for it, and a body valid
// against that status's schema.
func TestOpenAPIAnswersOfALiveServer(t *testing.T) {
	c := loadOpenAPI(t)
	ts := newTest(t, Options{})
	done := ts.create(`{"name": "short", "rate": "10kpps", "count": 5}`)
	ts.wait(done.ID)
	long := ts.create(`{"name": "long", "rate": "200pps", "count": 1000000}`)
	seen := map[string]bool{}
	call := func(method, path, docPath string, body any) []byte {
		t.Helper()
		op := method + " " + docPath
		seen[op] = true
		code, data := ts.do(method, path, body)
		r, ok := c.at("paths", docPath, strings.ToLower(method), "responses")[strconv.Itoa(code)].(map[string]any)
		if !ok {
			t.Errorf("%s %s: status %d, which the document does not list for %s (%.300s)", method, path, code, op, data)
			return data
		}
		content, _ := c.resolve(r)["content"].(map[string]any)
		media, ok := content["application/json"].(map[string]any)
		if !ok {
			return data
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Errorf("%s %s: %d %.200s: %v", method, path, code, data, err)
			return data
		}
		for _, e := range c.check(media["schema"].(map[string]any), v, "") {
			t.Errorf("%s %s (%d): %s", method, path, code, e)
		}
		return data
	}
	id, lid := fmt.Sprint(done.ID), fmt.Sprint(long.ID)
	call("GET", "/api/v1/openapi.json", "/api/v1/openapi.json", nil)
	call("POST", "/api/v1/jobs", "/api/v1/jobs", `{"rate": "fast", "workers": 0}`)
	call("POST", "/api/v1/jobs", "/api/v1/jobs", `{"rate": "1kpps", "count": 2, "name": "api"}`)
	call("GET", "/api/v1/jobs?limit=5", "/api/v1/jobs", nil)
	call("GET", "/api/v1/jobs?limit=0", "/api/v1/jobs", nil)
	for _, p := range []string{"", "/report", "/report.html", "/samples"} {
		call("GET", "/api/v1/jobs/"+id+p, "/api/v1/jobs/{id}"+p, nil)
		call("GET", "/api/v1/jobs/abc"+p, "/api/v1/jobs/{id}"+p, nil)
		call("GET", "/api/v1/jobs/99999"+p, "/api/v1/jobs/{id}"+p, nil)
	}
	call("GET", "/api/v1/jobs/"+lid+"/report", "/api/v1/jobs/{id}/report", nil)           // 409: running
	call("GET", "/api/v1/jobs/"+lid+"/report.html", "/api/v1/jobs/{id}/report.html", nil) // 409: running
	call("POST", "/api/v1/preview", "/api/v1/preview", `{"frames": 2}`)
	call("POST", "/api/v1/preview", "/api/v1/preview", `{"template": "streams:\n  - bogus: 1\n"}`)
	call("GET", "/api/v1/backends", "/api/v1/backends", nil)
	call("GET", "/api/v1/sysinfo", "/api/v1/sysinfo", nil)
	call("GET", "/healthz", "/healthz", nil)
	call("GET", "/metrics", "/metrics", nil)
	call("DELETE", "/api/v1/jobs/"+lid, "/api/v1/jobs/{id}", nil) // 409: running

	// The event streams: a running job's snapshots, a finished one's report.
	for _, j := range []string{lid, id} {
		seen["GET /api/v1/jobs/{id}/events"] = true
		req, _ := http.NewRequestWithContext(t.Context(), "GET", ts.hs.URL+"/api/v1/jobs/"+j+"/events", nil)
		resp, err := ts.hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<22)
		event, events, kinds := "", 0, map[string]bool{}
		deadline := time.Now().Add(10 * time.Second)
		for sc.Scan() && events < 3 && time.Now().Before(deadline) {
			line := sc.Text()
			if e, ok := strings.CutPrefix(line, "event: "); ok {
				event = e
			}
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			events++
			kinds[event] = true
			schema := map[string]string{"snapshot": "SnapshotView", "report": "ReportEvent"}[event]
			var v any
			if schema == "" || json.Unmarshal([]byte(data), &v) != nil {
				t.Errorf("job %s: event %q, data %.200s", j, event, data)
				continue
			}
			for _, e := range c.check(map[string]any{"$ref": "#/components/schemas/" + schema}, v, event) {
				t.Errorf("job %s events: %s", j, e)
			}
			if event == "report" {
				break
			}
		}
		resp.Body.Close()
		if want := map[string]string{lid: "snapshot", id: "report"}[j]; !kinds[want] {
			t.Errorf("job %s: no %s event checked (events %v)", j, want, kinds)
		}
	}
	call("POST", "/api/v1/jobs/"+lid+"/stop", "/api/v1/jobs/{id}/stop", nil)
	ts.wait(long.ID)
	call("POST", "/api/v1/jobs/"+lid+"/stop", "/api/v1/jobs/{id}/stop", nil) // 409: ended
	call("POST", "/api/v1/jobs/abc/stop", "/api/v1/jobs/{id}/stop", nil)
	call("DELETE", "/api/v1/jobs/"+id, "/api/v1/jobs/{id}", nil)
	for _, op := range operations(c) {
		if !seen[op] {
			t.Errorf("%s: the test asks nothing of it; add a request", op)
		}
	}
}
