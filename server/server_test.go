//go:build linux

package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	_ "github.com/wpg-dev/wpg/backend/null"
	_ "github.com/wpg-dev/wpg/backend/pcapfile"
	_ "github.com/wpg-dev/wpg/backend/pipe"
	"github.com/wpg-dev/wpg/internal/sys"
)

// testToken is a token of the strength wpg serve asks for.
const testToken = "s3cret-test-token-0123"

type testServer struct {
	t   *testing.T
	s   *Server
	hs  *httptest.Server
	tok string
}

func newTest(t *testing.T, opt Options) *testServer {
	t.Helper()
	if opt.DB == "" {
		opt.DB = filepath.Join(t.TempDir(), "jobs.db")
	}
	s, err := New(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, s: s, hs: httptest.NewServer(s.Handler()), tok: opt.Token}
	t.Cleanup(func() {
		ts.hs.Close()
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return ts
}

// do sends a request and returns the status and body.
func (ts *testServer) do(method, path string, body any, hdr ...string) (int, []byte) {
	ts.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			ts.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, ts.hs.URL+path, rd)
	if err != nil {
		ts.t.Fatal(err)
	}
	if ts.tok != "" {
		req.Header.Set("Authorization", "Bearer "+ts.tok)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" { // the client sends req.Host, not the header
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := ts.hs.Client().Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	return resp.StatusCode, data
}

func (ts *testServer) create(body string) JobView {
	ts.t.Helper()
	code, data := ts.do("POST", "/api/v1/jobs", body)
	if code != http.StatusCreated {
		ts.t.Fatalf("create %s: %d %s", body, code, data)
	}
	var v JobView
	if err := json.Unmarshal(data, &v); err != nil {
		ts.t.Fatal(err)
	}
	return v
}

// wait polls a job until it has ended (bounded).
func (ts *testServer) wait(id int64) JobView {
	ts.t.Helper()
	for range 3000 {
		code, data := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d", id), nil)
		var v JobView
		if code != http.StatusOK || json.Unmarshal(data, &v) != nil {
			ts.t.Fatalf("get %d: %d %s", id, code, data)
		}
		if v.Status != StatusRunning {
			return v
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.t.Fatalf("job %d did not end", id)
	return JobView{}
}

type event struct {
	name string
	id   string
	data []byte
}

// events reads a stream's events into a channel until it ends.
func readEvents(t *testing.T, r io.Reader) <-chan event {
	ch := make(chan event, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 4<<20)
		var ev event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" {
					ch <- ev
				}
				ev = event{}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = []byte(strings.TrimPrefix(line, "data: "))
			}
		}
	}()
	return ch
}

func TestJobLifecycle(t *testing.T) {
	ts := newTest(t, Options{})
	v := ts.create(`{"name": "<script>alert(1)</script>", "rate": "2kpps"}`)
	if v.Status != StatusRunning || v.Backend != "null" || v.ID < 1 {
		t.Fatalf("created %+v", v)
	}

	resp, err := ts.hs.Client().Get(fmt.Sprintf("%s/api/v1/jobs/%d/events", ts.hs.URL, v.ID))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("events content type %q", ct)
	}
	evs := readEvents(t, resp.Body)
	var last SnapshotView
	for n := 0; n < 3; n++ {
		ev, ok := <-evs
		if !ok || ev.name != "snapshot" {
			t.Fatalf("event %d: %q %s", n, ev.name, ev.data)
		}
		var s SnapshotView
		if err := json.Unmarshal(ev.data, &s); err != nil {
			t.Fatal(err)
		}
		if s.Frames < last.Frames || s.Job != v.ID || len(s.Workers) != 1 {
			t.Errorf("snapshot %d: %+v after %+v", n, s, last)
		}
		last = s
	}

	if code, data := ts.do("DELETE", fmt.Sprintf("/api/v1/jobs/%d", v.ID), nil); code != http.StatusConflict {
		t.Errorf("delete running: %d %s", code, data)
	}
	if code, data := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d/report", v.ID), nil); code != http.StatusConflict {
		t.Errorf("report of a running job: %d %s", code, data)
	}
	if code, data := ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", v.ID), nil); code != http.StatusAccepted {
		t.Fatalf("stop: %d %s", code, data)
	}
	var final struct {
		Job    JobView         `json:"job"`
		Report json.RawMessage `json:"report"`
	}
	for ev := range evs {
		if ev.name == "report" {
			if err := json.Unmarshal(ev.data, &final); err != nil {
				t.Fatal(err)
			}
		}
	}
	if final.Job.Status != StatusStopped || final.Report == nil {
		t.Fatalf("final event: %+v", final)
	}
	var rep struct {
		Frames uint64 `json:"frames"`
		Stop   string `json:"stop"`
	}
	json.Unmarshal(final.Report, &rep)
	if rep.Stop != "signal" || rep.Frames < last.Frames || final.Job.Frames != rep.Frames {
		t.Errorf("report %+v, job %+v, last snapshot %d frames", rep, final.Job, last.Frames)
	}

	code, data := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d/report", v.ID), nil)
	if code != http.StatusOK || !bytes.Contains(data, []byte(`"schema": "wpg.report/v2"`)) {
		t.Fatalf("report: %d %s", code, data)
	}
	code, data = ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d", v.ID), nil)
	if code != http.StatusOK || bytes.Contains(data, []byte("<script>")) || !bytes.Contains(data, []byte(`\u003cscript\u003e`)) {
		t.Errorf("job: %d %s: the name must come back JSON-escaped", code, data)
	}
	if code, data := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d/samples", v.ID), nil); code != http.StatusOK || !bytes.Contains(data, []byte(`"samples"`)) {
		t.Errorf("samples: %d %s", code, data)
	}
	if code, data := ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", v.ID), nil); code != http.StatusConflict {
		t.Errorf("stop a finished job: %d %s", code, data)
	}
	// A finished job's event stream is its report at once.
	code, data = ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d/events", v.ID), nil)
	if code != http.StatusOK || !bytes.HasPrefix(data, []byte("event: report\n")) {
		t.Errorf("events of a finished job: %d %s", code, data)
	}
	if code, data := ts.do("DELETE", fmt.Sprintf("/api/v1/jobs/%d", v.ID), nil); code != http.StatusNoContent {
		t.Fatalf("delete: %d %s", code, data)
	}
	for _, p := range []string{"", "/report", "/samples", "/events"} {
		if code, data := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d%s", v.ID, p), nil); code != http.StatusNotFound {
			t.Errorf("GET %s after delete: %d %s", p, code, data)
		}
	}
	if code, _ := ts.do("DELETE", fmt.Sprintf("/api/v1/jobs/%d", v.ID), nil); code != http.StatusNotFound {
		t.Errorf("delete twice: %d", code)
	}
	if code, _ := ts.do("GET", "/api/v1/jobs/abc", nil); code != http.StatusBadRequest {
		t.Errorf("bad id: %d", code)
	}
}

func TestSamplesEverySecond(t *testing.T) {
	ts := newTest(t, Options{})
	v := ts.create(`{"rate": "1kpps", "duration": 2500000000}`)
	ts.wait(v.ID)
	code, data := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d/samples", v.ID), nil)
	var got struct{ Samples []Sample }
	if code != http.StatusOK || json.Unmarshal(data, &got) != nil || len(got.Samples) < 1 {
		t.Fatalf("samples: %d %s", code, data)
	}
	for i, x := range got.Samples {
		if x.T != int64(i+1) || x.Frames == 0 || x.PPS <= 0 {
			t.Errorf("sample %d: %+v", i, x)
		}
	}
}

func TestListPaging(t *testing.T) {
	ts := newTest(t, Options{})
	var ids []int64
	for range 3 {
		v := ts.create(`{"count": 100}`)
		ts.wait(v.ID)
		ids = append(ids, v.ID)
	}
	run := ts.create(`{"rate": "1kpps"}`)
	defer ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", run.ID), nil)
	type page struct {
		Jobs                          []JobView
		Total, Offset, Limit, Running int
	}
	get := func(q string) page {
		code, data := ts.do("GET", "/api/v1/jobs"+q, nil)
		var p page
		if code != http.StatusOK || json.Unmarshal(data, &p) != nil {
			t.Fatalf("list %s: %d %s", q, code, data)
		}
		return p
	}
	p := get("?limit=2")
	if p.Total != 4 || p.Running != 1 || len(p.Jobs) != 2 || p.Jobs[0].ID != run.ID || p.Jobs[0].Status != StatusRunning || p.Jobs[1].ID != ids[2] {
		t.Fatalf("page 1: %+v", p)
	}
	p = get("?offset=2&limit=2")
	if len(p.Jobs) != 2 || p.Jobs[0].ID != ids[1] || p.Jobs[1].ID != ids[0] || p.Jobs[1].Status != StatusDone || p.Jobs[1].Frames != 100 {
		t.Fatalf("page 2: %+v", p)
	}
	if p = get("?offset=4"); len(p.Jobs) != 0 || p.Limit != DefaultPageLimit {
		t.Fatalf("page 3: %+v", p)
	}
	code, data := ts.do("GET", "/api/v1/jobs?limit=0&offset=x", nil)
	if code != http.StatusBadRequest || !bytes.Contains(data, []byte(`"field": "limit"`)) || !bytes.Contains(data, []byte(`"field": "offset"`)) {
		t.Errorf("bad paging: %d %s", code, data)
	}
}

func TestValidationErrors(t *testing.T) {
	ts := newTest(t, Options{})
	code, data := ts.do("POST", "/api/v1/jobs", `{"rate": "fast", "workers": 0}`)
	var body ErrorBody
	if code != http.StatusBadRequest || json.Unmarshal(data, &body) != nil || len(body.Errors) < 2 {
		t.Fatalf("%d %s", code, data)
	}
	fields := map[string]FieldError{}
	for _, e := range body.Errors {
		fields[e.Field] = e
	}
	if e := fields["rate"]; e.Value != "fast" || e.Reason == "" {
		t.Errorf("rate: %+v (all: %s)", e, data)
	}
	for _, bad := range []struct{ body, field string }{
		{`{"rate": 5}`, "rate"},
		{`{"nosuch": 1}`, "nosuch"},
		{`{"template_text": "streams: [\n  {name: x, bad: 1}\n]\n"}`, "template"},
		{`not json`, ""},
	} {
		code, data := ts.do("POST", "/api/v1/jobs", bad.body)
		var body ErrorBody
		if code != http.StatusBadRequest || json.Unmarshal(data, &body) != nil || len(body.Errors) == 0 || body.Errors[0].Field != bad.field {
			t.Errorf("%s: %d %s", bad.body, code, data)
		}
	}
	// The pipe backend would write into the server's stdout: refused.
	code, data = ts.do("POST", "/api/v1/jobs", `{"backend": "pipe", "count": 10}`)
	if code != http.StatusBadRequest || !bytes.Contains(data, []byte("no standard input or output")) {
		t.Errorf("pipe to stdout: %d %s", code, data)
	}
}

func TestPcapfileJob(t *testing.T) {
	ts := newTest(t, Options{})
	out := filepath.Join(t.TempDir(), "out.pcap")
	v := ts.create(fmt.Sprintf(`{"backend": "pcapfile", "output": %q, "count": 500, "rate": "5kpps"}`, out))
	if got := ts.wait(v.ID); got.Status != StatusDone || got.Frames != 500 || !got.HasReport {
		t.Fatalf("%+v", got)
	}
}

func TestCoresConflict(t *testing.T) {
	allowed, err := sys.AllowedCPUs()
	if err != nil || len(allowed) == 0 {
		t.Skip("no allowed CPUs known")
	}
	ts := newTest(t, Options{})
	c := strconv.Itoa(allowed[0])
	a := ts.create(`{"rate": "1kpps", "cores": "` + c + `"}`)
	defer ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", a.ID), nil)
	code, data := ts.do("POST", "/api/v1/jobs", `{"rate": "1kpps", "cores": "`+c+`"}`)
	var body ErrorBody
	if code != http.StatusConflict || json.Unmarshal(data, &body) != nil || body.Job != a.ID || !strings.Contains(body.Error, "running job "+strconv.FormatInt(a.ID, 10)) {
		t.Fatalf("overlap: %d %s", code, data)
	}
	if len(allowed) > 1 {
		b := ts.create(`{"rate": "1kpps", "auto_pin": true}`)
		defer ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", b.ID), nil)
		if b.Cores == "" || b.Cores == c {
			t.Errorf("auto_pin chose %q next to a job on %s", b.Cores, c)
		}
	}
}

func TestPreview(t *testing.T) {
	ts := newTest(t, Options{PreviewMax: 16})
	code, data := ts.do("POST", "/api/v1/preview", `{"frames": 10000}`)
	var p PreviewResponse
	if code != http.StatusOK || json.Unmarshal(data, &p) != nil {
		t.Fatalf("%d %s", code, data)
	}
	if !p.Capped || p.Limit != 16 || len(p.Frames) != 16 || p.Requested != 10000 || p.Frames[0].Hex == "" || len(p.Frames[0].Layers) == 0 {
		t.Fatalf("capped preview: capped %v limit %d frames %d", p.Capped, p.Limit, len(p.Frames))
	}
	tmpl := "streams:\n  - name: \"<script>x</script>\"\n    size: 64\n    ethernet: {src: \"02:00:00:00:00:01\", dst: \"02:00:00:00:00:02\"}\n    ipv4: {src: 198.18.0.1, dst: 198.19.0.1}\n    udp: {src: 1024, dst: 9}\n"
	code, data = ts.do("POST", "/api/v1/preview", PreviewRequest{Template: tmpl, Frames: 3})
	if code != http.StatusOK || bytes.Contains(data, []byte("<script>")) || !bytes.Contains(data, []byte(`\u003cscript\u003e`)) {
		t.Errorf("the stream name must come back JSON-escaped: %d %.300s", code, data)
	}
	// In a job: its spec (template_text) and its report come back escaped too.
	v := ts.create(fmt.Sprintf(`{"name": "<script>", "template_text": %q, "count": 10}`, tmpl))
	ts.wait(v.ID)
	for _, p := range []string{"", "/report", "/events"} {
		code, data := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d%s", v.ID, p), nil)
		if code != http.StatusOK || bytes.Contains(data, []byte("<script>")) {
			t.Errorf("GET %s: %d: <script> must come back JSON-escaped: %.300s", p, code, data)
		}
	}
	list := func() []byte { _, d := ts.do("GET", "/api/v1/jobs", nil); return d }()
	if bytes.Contains(list, []byte("<script>")) {
		t.Errorf("list: <script> must come back JSON-escaped")
	}
	code, data = ts.do("POST", "/api/v1/preview", PreviewRequest{Template: "streams:\n  - name: a\n    bogus: 1\n"})
	var eb ErrorBody
	if code != http.StatusBadRequest || json.Unmarshal(data, &eb) != nil || len(eb.Errors) != 1 || eb.Errors[0].Field != "template" || eb.Errors[0].Line != 3 || eb.Errors[0].Col == 0 {
		t.Errorf("template error: %d %s", code, data)
	}
}

func TestBackendsSysinfoHealth(t *testing.T) {
	ts := newTest(t, Options{Caps: func(string) bool { return false }})
	code, data := ts.do("GET", "/api/v1/backends", nil)
	var b struct{ Backends []BackendInfo }
	if code != http.StatusOK || json.Unmarshal(data, &b) != nil {
		t.Fatalf("%d %s", code, data)
	}
	by := map[string]BackendInfo{}
	for _, x := range b.Backends {
		by[x.Name] = x
	}
	if !by["null"].Runnable || by["pipe"].Needs == "" {
		t.Errorf("backends: %s", data)
	}
	if code, data := ts.do("GET", "/api/v1/sysinfo", nil); code != http.StatusOK || !bytes.Contains(data, []byte(`"features"`)) {
		t.Errorf("sysinfo: %d %.200s", code, data)
	}
	if code, _ := ts.do("GET", "/healthz", nil); code != http.StatusOK {
		t.Errorf("healthz: %d", code)
	}
	if code, _ := ts.do("GET", "/api/v1/nosuch", nil); code != http.StatusNotFound {
		t.Errorf("unknown endpoint: %d", code)
	}
	if code, _ := ts.do("POST", "/api/v1/jobs", `{"backend": "nosuch"}`); code != http.StatusBadRequest {
		t.Errorf("unknown backend: %d", code)
	}
}

func TestBackendNeedsCap(t *testing.T) {
	ts := newTest(t, Options{Caps: func(string) bool { return false }})
	for _, x := range ts.s.Backends() {
		if x.Name == "afpacket" && (x.Runnable || !strings.Contains(x.WhyNot, "CAP_NET_RAW")) {
			t.Errorf("afpacket without CAP_NET_RAW: %+v", x)
		}
	}
}

func TestToken(t *testing.T) {
	ts := newTest(t, Options{Token: testToken})
	ts.tok = ""
	for _, hdr := range [][]string{nil, {"Authorization", "Bearer wrong"}, {"Authorization", testToken}, {"Authorization", "Basic " + testToken}} {
		for _, p := range []string{"/api/v1/jobs", "/metrics"} {
			if code, _ := ts.do("GET", p, nil, hdr...); code != http.StatusUnauthorized {
				t.Errorf("GET %s with %v: %d, want 401", p, hdr, code)
			}
		}
	}
	if code, _ := ts.do("POST", "/api/v1/jobs", `{"count": 1}`); code != http.StatusUnauthorized {
		t.Errorf("POST without a token: %d", code)
	}
	if code, _ := ts.do("GET", "/api/v1/jobs", nil, "Authorization", "Bearer "+testToken); code != http.StatusOK {
		t.Errorf("with the token: %d", code)
	}
	if code, _ := ts.do("GET", "/healthz", nil); code != http.StatusOK {
		t.Errorf("healthz needs no token: %d", code)
	}
}

func TestCrossOrigin(t *testing.T) {
	ts := newTest(t, Options{})
	for _, hdr := range [][]string{{"Sec-Fetch-Site", "cross-site"}, {"Origin", "https://evil.example"}} {
		code, data := ts.do("POST", "/api/v1/jobs", `{"count": 1}`, hdr...)
		if code != http.StatusForbidden {
			t.Errorf("cross-origin POST with %v: %d %s", hdr, code, data)
		}
	}
	if code, _ := ts.do("GET", "/api/v1/jobs", nil, "Sec-Fetch-Site", "cross-site"); code != http.StatusOK {
		t.Errorf("cross-origin GET: %d", code)
	}
	if code, data := ts.do("POST", "/api/v1/preview", `{}`, "Sec-Fetch-Site", "same-origin"); code != http.StatusOK {
		t.Errorf("same-origin POST: %d %s", code, data)
	}
}

func TestBodyTooLarge(t *testing.T) {
	ts := newTest(t, Options{MaxBody: 1024})
	big := `{"template": "` + strings.Repeat("x", 2048) + `"}`
	if code, data := ts.do("POST", "/api/v1/preview", big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("large body: %d %s", code, data)
	}
	// Without a Content-Length (chunked): cut while decoding.
	req, _ := http.NewRequest("POST", ts.hs.URL+"/api/v1/jobs", io.MultiReader(strings.NewReader(big)))
	req.ContentLength = -1
	resp, err := ts.hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked large body: %d", resp.StatusCode)
	}
}

func TestCheckListen(t *testing.T) {
	for _, a := range []string{"127.0.0.1:8080", "[::1]:0", "localhost:9000", "127.0.0.2:1"} {
		if err := CheckListen(a, ""); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
	for _, a := range []string{"0.0.0.0:8080", ":8080", "192.0.2.1:80", "[::]:80", "example.com:80"} {
		if err := CheckListen(a, ""); err == nil || !strings.Contains(err.Error(), "no token") {
			t.Errorf("%s without a token: %v", a, err)
		}
		if err := CheckListen(a, "t"); err != nil {
			t.Errorf("%s with a token: %v", a, err)
		}
	}
	err := ListenAndServe(context.Background(), Options{Listen: "0.0.0.0:0", DB: filepath.Join(t.TempDir(), "x.db")}, nil)
	if err == nil || !strings.Contains(err.Error(), "no token") {
		t.Errorf("ListenAndServe on 0.0.0.0 without a token: %v", err)
	}
}

func TestRestartKeepsHistory(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jobs.db")
	s, err := New(context.Background(), Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	ts := &testServer{t: t, s: s, hs: hs}
	done := ts.create(`{"name": "first", "count": 200}`)
	ts.wait(done.ID)
	hs.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A job left "running" by a server that died, with two samples.
	st, _, err := OpenStore(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	rec := &JobRecord{Name: "died", Spec: `{"rate":"1kpps"}`, Status: StatusRunning, CreatedAt: time.Now().UnixNano(), StartedAt: time.Now().UnixNano()}
	if err := st.Insert(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= 2; i++ {
		if err := st.AddSample(context.Background(), rec.ID, Sample{T: i, Frames: uint64(1000 * i), PPS: 1000}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	ts = newTest(t, Options{DB: db})
	code, data := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d", done.ID), nil)
	var v JobView
	if code != http.StatusOK || json.Unmarshal(data, &v) != nil || v.Status != StatusDone || v.Name != "first" || v.Frames != 200 || !v.HasReport {
		t.Fatalf("after restart: %d %s", code, data)
	}
	if code, _ := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d/report", done.ID), nil); code != http.StatusOK {
		t.Errorf("report after restart: %d", code)
	}
	code, data = ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d", rec.ID), nil)
	if code != http.StatusOK || json.Unmarshal(data, &v) != nil || v.Status != StatusInterrupted || v.EndedAt == nil || v.EndedAt.Sub(v.StartedAt) != 2*time.Second {
		t.Fatalf("interrupted job: %d %s", code, data)
	}
	// Its totals are its last sample's (they read 0: the totals come from
	// a report, and an interrupted job has none).
	if v.Frames != 2000 || v.PPS != 1000 {
		t.Errorf("interrupted job: frames %d, pps %v; want its last sample's 2000, 1000", v.Frames, v.PPS)
	}
	code, data = ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d/samples", rec.ID), nil)
	if code != http.StatusOK || !bytes.Contains(data, []byte(`"frames": 2000`)) {
		t.Errorf("its samples: %d %s", code, data)
	}
	if ver, err := ts.s.Store().Version(context.Background()); err != nil || ver != SchemaVersion {
		t.Errorf("schema version %d, %v", ver, err)
	}
}

func TestPrune(t *testing.T) {
	ts := newTest(t, Options{JobHistoryDB: 2})
	var last int64
	for range 4 {
		last = ts.create(`{"count": 10}`).ID
		ts.wait(last)
	}
	// The monitor prunes after storing the job: the last one may not be pruned yet.
	for range 300 {
		if _, total, _ := ts.s.Store().List(context.Background(), 0, 10); total == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	recs, total, err := ts.s.Store().List(context.Background(), 0, 10)
	if err != nil || total != 2 || recs[0].ID != last || recs[1].ID != last-1 {
		t.Fatalf("after pruning: %d jobs, %v", total, err)
	}
}

func scrape(t *testing.T, ts *testServer) map[string]*dto.MetricFamily {
	t.Helper()
	code, data := ts.do("GET", "/metrics", nil)
	if code != http.StatusOK {
		t.Fatalf("metrics: %d %s", code, data)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, data)
	}
	return fams
}

func counterOf(fams map[string]*dto.MetricFamily, name string, id int64) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "job" && l.GetValue() == strconv.FormatInt(id, 10) {
				if m.GetCounter() != nil {
					return m.GetCounter().GetValue(), true
				}
				return m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

func TestMetrics(t *testing.T) {
	ts := newTest(t, Options{Token: testToken})
	v := ts.create(`{"name": "m", "rate": "2kpps"}`)
	var seen float64
	for range 500 {
		fams := scrape(t, ts)
		if up, ok := counterOf(fams, "wpg_job_running", v.ID); !ok || up != 1 {
			t.Fatalf("wpg_job_running of a running job: %v %v", up, ok)
		}
		if fams["process_cpu_seconds_total"] == nil || fams["go_goroutines"] == nil {
			t.Fatal("no process or Go metrics")
		}
		if n, _ := counterOf(fams, "wpg_job_frames_total", v.ID); n > 0 {
			seen = n
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if seen == 0 {
		t.Fatal("the frame counter did not move")
	}
	ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", v.ID), nil)
	end := ts.wait(v.ID)
	fams := scrape(t, ts)
	n, ok := counterOf(fams, "wpg_job_frames_total", v.ID)
	if !ok || uint64(n) != end.Frames || n < seen {
		t.Errorf("frames counter %v (%v), report %d, seen running %v", n, ok, end.Frames, seen)
	}
	if up, _ := counterOf(fams, "wpg_job_running", v.ID); up != 0 {
		t.Errorf("wpg_job_running after the end: %v", up)
	}
}

// TestServe runs the real ListenAndServe on 127.0.0.1:0 and stops it as a
// signal would: the running job is stopped and its report stored.
func TestServe(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jobs.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- ListenAndServe(ctx, Options{Listen: "127.0.0.1:0", DB: db, Token: testToken}, func(a net.Addr) { addrc <- a })
	}()
	var base string
	select {
	case a := <-addrc:
		base = "http://" + a.String()
	case err := <-errc:
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", base+"/api/v1/jobs", strings.NewReader(`{"rate": "1kpps"}`))
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var v JobView
	json.NewDecoder(resp.Body).Decode(&v)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	// An event stream open during the shutdown ends with the report.
	req, _ = http.NewRequest("GET", fmt.Sprintf("%s/api/v1/jobs/%d/events", base, v.ID), nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	evs := readEvents(t, resp.Body)
	for ev := range evs {
		var s SnapshotView
		if json.Unmarshal(ev.data, &s) == nil && s.Frames > 0 {
			break
		}
	}
	cancel()
	var lastEv event
	for ev := range evs {
		lastEv = ev
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if lastEv.name != "report" {
		t.Errorf("the stream ended with %q", lastEv.name)
	}
	st, n, err := OpenStore(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec, err := st.Get(context.Background(), v.ID)
	if err != nil || n != 0 || rec.Status != StatusStopped || rec.Report == nil || rec.Frames == 0 {
		t.Fatalf("after shutdown: %+v %v (%d interrupted)", rec, err, n)
	}
}
