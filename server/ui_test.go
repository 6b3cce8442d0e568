//go:build linux

package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// noRedirect is a client that shows redirects instead of following them.
func (ts *testServer) noRedirect() *http.Client {
	c := *ts.hs.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// page sends a request with the given cookie (nil: none) and headers,
// without the Bearer token, and returns the response and body.
func (ts *testServer) page(method, path string, form url.Values, cookie *http.Cookie, hdr ...string) (*http.Response, string) {
	ts.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, ts.hs.URL+path, body)
	if err != nil {
		ts.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if cookie != nil {
		req.AddCookie(cookie)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := ts.noRedirect().Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	return resp, string(b)
}

const evil = `<script>alert("x")</script>`

// TestUIEscapesEverywhere puts <script> into a job's name, its started_by
// and its template's stream name, and checks that no page shows it as
// markup: html/template escapes it in HTML and in the inlined JSON.
func TestUIEscapesEverywhere(t *testing.T) {
	ts := newTest(t, Options{})
	tmpl := "streams:\n  - name: '" + evil + "'\n    ipv4: {src: 198.18.0.1, dst: 198.19.0.1}\n    udp: {src: 1024, dst: 9}\n"
	body, _ := json.Marshal(map[string]any{"name": evil, "started_by": evil, "template_text": tmpl, "count": 20})
	a := ts.create(string(body))
	ts.wait(a.ID)
	b := ts.create(`{"name": "plain", "count": 20}`)
	ts.wait(b.ID)
	pages := map[string]string{
		"jobs":    "/",
		"job":     fmt.Sprintf("/jobs/%d", a.ID),
		"compare": fmt.Sprintf("/compare?id=%d&id=%d", a.ID, b.ID),
		"again":   fmt.Sprintf("/jobs/new?from=%d", a.ID),
		"new":     "/jobs/new",
		"host":    "/host",
	}
	for name, path := range pages {
		resp, html := ts.page("GET", path, nil, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %d\n%s", name, path, resp.StatusCode, html)
		}
		if strings.Contains(html, "<script>alert") {
			t.Errorf("%s (%s) shows <script> unescaped", name, path)
		}
		if open, closed := strings.Count(html, "<script"), strings.Count(html, "</script>"); open != closed {
			t.Errorf("%s (%s) has %d <script elements and %d </script>: inlined data ended one early", name, path, open, closed)
		}
		if name != "new" && name != "host" && !strings.Contains(html, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;") {
			t.Errorf("%s (%s) does not show the name escaped", name, path)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("%s: Content-Security-Policy %q", name, csp)
		}
	}
	// The preview fragment shows the stream's name escaped too.
	resp, html := ts.page("POST", "/ui/preview", url.Values{"template_text": {tmpl}}, nil)
	if resp.StatusCode != http.StatusOK || strings.Contains(html, "<script>alert") || !strings.Contains(html, `stream <span class="stream-name">&lt;script&gt;`) {
		t.Errorf("preview: %d\n%s", resp.StatusCode, html)
	}
	// And a template error that quotes it.
	resp, html = ts.page("POST", "/ui/preview", url.Values{"template_text": {"streams:\n  - " + evil + ": 1\n"}}, nil)
	if resp.StatusCode != http.StatusOK || strings.Contains(html, "<script>alert") || !strings.Contains(html, "line 2") {
		t.Errorf("preview error: %d\n%s", resp.StatusCode, html)
	}
}

func TestUILoginCookie(t *testing.T) {
	ts := newTest(t, Options{Token: testToken})
	resp, _ := ts.page("GET", "/jobs/new", nil, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?next=%2Fjobs%2Fnew" {
		t.Fatalf("a page without login: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	// An htmx request of a page whose session has ended sends the page to the login.
	resp, _ = ts.page("GET", "/ui/running", nil, nil, "HX-Request", "true", "HX-Current-URL", ts.hs.URL+"/?x=1")
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("HX-Redirect") != "/login?next=%2F%3Fx%3D1" {
		t.Errorf("htmx without a session: %d %q", resp.StatusCode, resp.Header.Get("HX-Redirect"))
	}
	resp, html := ts.page("POST", "/login", url.Values{"token": {"wrong"}, "next": {"/jobs/new"}}, nil)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(html, "wrong token") || len(resp.Cookies()) != 0 {
		t.Fatalf("wrong token: %d %v\n%s", resp.StatusCode, resp.Cookies(), html)
	}
	resp, _ = ts.page("POST", "/login", url.Values{"token": {testToken}, "next": {"//evil.example/"}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("login with an off-site next: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	var c *http.Cookie
	for _, x := range resp.Cookies() {
		if x.Name == CookieName {
			c = x
		}
	}
	if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || strings.Contains(c.Value, testToken) {
		t.Fatalf("session cookie: %+v", c)
	}
	cookie := &http.Cookie{Name: c.Name, Value: c.Value}
	if resp, html := ts.page("GET", "/", nil, cookie); resp.StatusCode != http.StatusOK || !strings.Contains(html, "Log out") {
		t.Fatalf("jobs page with the cookie: %d", resp.StatusCode)
	}
	// The cookie is accepted where the Bearer header is.
	if resp, _ := ts.page("GET", "/api/v1/jobs", nil, cookie); resp.StatusCode != http.StatusOK {
		t.Errorf("API with the cookie: %d", resp.StatusCode)
	}
	if resp, _ := ts.page("GET", "/metrics", nil, cookie); resp.StatusCode != http.StatusOK {
		t.Errorf("metrics with the cookie: %d", resp.StatusCode)
	}
	resp, _ = ts.page("POST", "/api/v1/jobs", nil, cookie, "Content-Type", "application/json", "Sec-Fetch-Site", "same-origin")
	if resp.StatusCode != http.StatusBadRequest { // an empty body: it got past the guard
		t.Errorf("same-origin POST with the cookie: %d", resp.StatusCode)
	}
	// A forged or stale cookie is not.
	if resp, _ := ts.page("GET", "/api/v1/jobs", nil, &http.Cookie{Name: CookieName, Value: "forged-session-value-forged-session"}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("API with another token's cookie: %d", resp.StatusCode)
	}
	// A job started from the form records who started it.
	resp, html = ts.page("POST", "/jobs", url.Values{"backend": {"null"}, "rate": {"1kpps"}, "count": {"50"}, "workers": {"1"}, "started_by": {"ann"}, "name": {"form job"}}, cookie)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("form job: %d\n%s", resp.StatusCode, html)
	}
	var id int64
	fmt.Sscanf(resp.Header.Get("Location"), "/jobs/%d", &id)
	v := ts.wait(id)
	if v.StartedBy != "ann" || v.Client != "127.0.0.1" || v.Name != "form job" || v.Frames != 50 {
		t.Errorf("form job: %+v", v)
	}
	resp, _ = ts.page("POST", "/logout", url.Values{}, cookie)
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 || resp.Cookies()[0].MaxAge >= 0 {
		t.Errorf("logout: %d %v", resp.StatusCode, resp.Cookies())
	}
}

// TestUICrossOriginWithCookie: a cross-site form post carries the
// SameSite=Strict cookie in no browser, but were it sent anyway the
// cross-origin protection refuses it.
func TestUICrossOriginWithCookie(t *testing.T) {
	ts := newTest(t, Options{Token: testToken})
	cookie := ts.login()
	form := url.Values{"backend": {"null"}, "rate": {"1kpps"}, "count": {"10"}}
	for _, path := range []string{"/jobs", "/api/v1/jobs", "/login", "/logout", "/jobs/1/stop", "/ui/preview"} {
		for _, hdr := range [][]string{{"Sec-Fetch-Site", "cross-site"}, {"Origin", "http://evil.example"}} {
			resp, _ := ts.page("POST", path, form, cookie, hdr...)
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("POST %s with %s: %d, want 403", path, hdr[0], resp.StatusCode)
			}
		}
	}
	if code, data := ts.do("GET", "/api/v1/jobs", nil); code != http.StatusOK || bytes.Contains(data, []byte(`"id"`)) {
		t.Errorf("a job was started: %d %s", code, data)
	}
}

func TestUINewJobFormErrors(t *testing.T) {
	ts := newTest(t, Options{})
	resp, html := ts.page("POST", "/jobs", url.Values{"backend": {"null"}, "workers": {"many"}, "duration": {"soon"}}, nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(html, "<code>workers</code> = <code>many</code>: is not a whole number") ||
		!strings.Contains(html, "<code>duration</code>") || !strings.Contains(html, `value="many"`) {
		t.Fatalf("bad numbers: %d\n%s", resp.StatusCode, html)
	}
	resp, html = ts.page("POST", "/jobs", url.Values{"backend": {"null"}, "rate": {"fast"}, "workers": {"0"}}, nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(html, "<code>rate</code>") || !strings.Contains(html, "<code>workers</code>") {
		t.Fatalf("validation: %d\n%s", resp.StatusCode, html)
	}
	resp, html = ts.page("POST", "/jobs", url.Values{"backend": {"null"}, "count": {"5"}, "template_text": {"streams: [\n"}}, nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(html, "line ") {
		t.Fatalf("bad template: %d\n%s", resp.StatusCode, html)
	}
	// Backend options go by backend: the pcapfile form writes a file.
	out := filepath.Join(t.TempDir(), "ui.pcap")
	resp, html = ts.page("POST", "/jobs", url.Values{"backend": {"pcapfile"}, "opt.pcapfile.output": {out}, "opt.null.output": {"/nowhere"}, "count": {"7"}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("pcapfile form: %d\n%s", resp.StatusCode, html)
	}
	var id int64
	fmt.Sscanf(resp.Header.Get("Location"), "/jobs/%d", &id)
	if v := ts.wait(id); v.Status != StatusDone || v.Frames != 7 {
		t.Fatalf("pcapfile job: %+v", v)
	}
	if st, err := os.Stat(out); err != nil || st.Size() == 0 {
		t.Fatalf("pcap output: %v", err)
	}
	// The job page of a finished job shows its report as wpg send prints it.
	_, html = ts.page("GET", fmt.Sprintf("/jobs/%d", id), nil, nil)
	if !strings.Contains(html, `id="report"`) || !strings.Contains(html, "pcapfile") {
		t.Errorf("job page has no report:\n%s", html)
	}
	// Run again fills the form from the spec.
	_, html = ts.page("GET", fmt.Sprintf("/jobs/new?from=%d", id), nil, nil)
	if !strings.Contains(html, `type="text" name="opt.pcapfile.output" value="`+out+`"`) || !strings.Contains(html, `name="count" id="count" type="number" min="0" value="7"`) {
		t.Errorf("run again does not refill the form:\n%s", html)
	}
}

func TestUIPagesErrors(t *testing.T) {
	ts := newTest(t, Options{})
	for path, code := range map[string]int{"/jobs/x": 400, "/jobs/99": 404, "/compare?id=1&id=zz": 400, "/compare?id=5&id=6": 404} {
		if resp, _ := ts.page("GET", path, nil, nil); resp.StatusCode != code {
			t.Errorf("%s: %d, want %d", path, resp.StatusCode, code)
		}
	}
	if resp, html := ts.page("GET", "/compare?id=1", nil, nil); resp.StatusCode != http.StatusOK || !strings.Contains(html, "two or more") {
		t.Errorf("compare one job: %d", resp.StatusCode)
	}
}

// TestUIStatic: the vendored libraries are served, with their licences
// beside them, and every example of the repository is offered.
func TestUIStatic(t *testing.T) {
	ts := newTest(t, Options{Token: testToken})
	for _, f := range []string{"vendor/htmx.min.js", "vendor/uPlot.iife.min.js", "vendor/uPlot.min.css", "vendor/htmx.LICENSE", "vendor/uPlot.LICENSE", "app.js", "app.css"} {
		resp, body := ts.page("GET", "/static/"+f, nil, nil)
		if resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Errorf("/static/%s: %d (%d bytes)", f, resp.StatusCode, len(body))
		}
	}
	v, err := webFS.ReadFile("web/static/vendor/VERSIONS")
	if err != nil || !bytes.Contains(v, []byte("htmx.org 2.")) || !bytes.Contains(v, []byte("uplot 1.")) {
		t.Errorf("VERSIONS: %v\n%s", err, v)
	}
	repo, err := filepath.Glob("../examples/*.wpg.yaml")
	if err != nil || len(repo) == 0 {
		t.Fatal("no examples/*.wpg.yaml", err)
	}
	offered := map[string]bool{}
	for _, e := range ts.s.ui.examples {
		offered[e.Name] = true
	}
	for _, p := range repo {
		if !offered[filepath.Base(p)] {
			t.Errorf("the new-job page does not offer %s", p)
		}
	}
}
