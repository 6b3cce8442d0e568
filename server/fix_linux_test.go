package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestEveryErrorHasAFix walks the API's error cases, a spec field at a
// time, the body, the query parameters, job IDs and the preview, and
// checks that every error the API returns has a reason and a fix, apart:
// several 400s had an empty fix with the remedy inside the reason ("give
// 1 to 256 …" as the reason of workers 1000), which a client that shows
// the fix beside the field could not show.
func TestEveryErrorHasAFix(t *testing.T) {
	ts := newTest(t, Options{})
	cases := []struct{ method, path, body string }{
		// the body
		{"POST", "/api/v1/jobs", ``},
		{"POST", "/api/v1/jobs", `not json`},
		{"POST", "/api/v1/jobs", `{"rate": `},
		{"POST", "/api/v1/jobs", `[1]`},
		{"POST", "/api/v1/jobs", `{} {}`},
		{"POST", "/api/v1/jobs", `{"rate": 5}`},
		{"POST", "/api/v1/jobs", `{"duration": "10s"}`},
		{"POST", "/api/v1/jobs", `{"count": -1}`},
		{"POST", "/api/v1/jobs", `{"nosuch": 1}`},
		{"POST", "/api/v1/jobs", `{"name": "` + strings.Repeat("n", MaxStartedBy+1) + `"}`},
		// a spec field at a time
		{"POST", "/api/v1/jobs", `{"backend": "nope"}`},
		{"POST", "/api/v1/jobs", `{"workers": 1000}`},
		{"POST", "/api/v1/jobs", `{"workers": 0}`},
		{"POST", "/api/v1/jobs", `{"batch": 0}`},
		{"POST", "/api/v1/jobs", `{"backend": "afpacket", "interface": "lo", "ring_depth": -1}`},
		{"POST", "/api/v1/jobs", `{"duration": -1}`},
		{"POST", "/api/v1/jobs", `{"backend": "shm", "start_receiver": true, "slots": -5}`},
		{"POST", "/api/v1/jobs", `{"rate": "1kpps", "fail_under": 2}`},
		{"POST", "/api/v1/jobs", `{"backend": "pcapfile"}`},
		{"POST", "/api/v1/jobs", `{"backend": "afpacket"}`},
		{"POST", "/api/v1/jobs", `{"backend": "afpacket", "interface": "lo", "tx_copy": "x"}`},
		{"POST", "/api/v1/jobs", `{"rate": "1kpps", "rt_priority": 200}`},
		{"POST", "/api/v1/jobs", `{"rate": "1kpps", "burst": -1}`},
		{"POST", "/api/v1/jobs", `{"backend": "pipe", "start_receiver": true, "pipe_size": 1}`},
		{"POST", "/api/v1/jobs", `{"rate": "fast"}`},
		{"POST", "/api/v1/jobs", `{"rate": "1000"}`},
		{"POST", "/api/v1/jobs", `{"rate": "10GBps"}`},
		{"POST", "/api/v1/jobs", `{"rate": "200%"}`},
		{"POST", "/api/v1/jobs", `{"rate": "1Tpps"}`},
		{"POST", "/api/v1/jobs", `{"rate": "1kpps", "rate_layer": "l9"}`},
		{"POST", "/api/v1/jobs", `{"rate": "1kpps", "wait": "nap"}`},
		{"POST", "/api/v1/jobs", `{"rate": "1kpps", "wake_boost": "x"}`},
		{"POST", "/api/v1/jobs", `{"clock": "sundial"}`},
		{"POST", "/api/v1/jobs", `{"backend": "shm", "start_receiver": true, "size": "huge"}`},
		{"POST", "/api/v1/jobs", `{"backend": "shm", "start_receiver": true, "size": "2GiB"}`},
		{"POST", "/api/v1/jobs", `{"backend": "shm", "start_receiver": true, "size": "1"}`},
		{"POST", "/api/v1/jobs", `{"size": "huge"}`},
		{"POST", "/api/v1/jobs", `{"backend": "shm", "start_receiver": true, "verify": "maybe"}`},
		{"POST", "/api/v1/jobs", `{"backend": "shm", "start_receiver": true, "payload_file": "/nonexistent/x"}`},
		{"POST", "/api/v1/jobs", `{"template": "/nonexistent.wpg.yaml"}`},
		{"POST", "/api/v1/jobs", `{"template_text": "streams: [\n  {name: x, bad: 1}\n]\n"}`},
		{"POST", "/api/v1/jobs", `{"template_text": "streams:\n  - ipv4: {src: 2001:db8::1}\n"}`},
		{"POST", "/api/v1/jobs", `{"plan": "eager"}`},
		{"POST", "/api/v1/jobs", `{"cores": "abc"}`},
		{"POST", "/api/v1/jobs", `{"cores": "5-2"}`},
		{"POST", "/api/v1/jobs", `{"cores": "99999"}`},
		{"POST", "/api/v1/jobs", `{"cores": "0", "auto_pin": true}`},
		{"POST", "/api/v1/jobs", `{"cores": "0", "workers": 2}`},
		{"POST", "/api/v1/jobs", `{"qdisc_bypass": true}`},
		{"POST", "/api/v1/jobs", `{"wait": "spin"}`},
		{"POST", "/api/v1/jobs", `{"backend": "pipe", "count": 10}`},
		{"POST", "/api/v1/jobs", `{"backend": "shm", "start_receiver": true, "raw": true}`},
		// query parameters and IDs
		{"GET", "/api/v1/jobs?limit=0", ``},
		{"GET", "/api/v1/jobs?offset=-1&limit=x", ``},
		{"GET", "/api/v1/jobs/abc", ``},
		{"GET", "/api/v1/jobs/0/report", ``},
		// the preview
		{"POST", "/api/v1/preview", `{"frames": -1}`},
		{"POST", "/api/v1/preview", `{"template": "streams: [\n  {name: x, bad: 1}\n]\n"}`},
		{"POST", "/api/v1/preview", `{"template": "streams:\n  - udp: {dport: 70000}\n"}`},
		{"POST", "/api/v1/preview", `nope`},
	}
	for _, c := range cases {
		code, data := ts.do(c.method, c.path, c.body)
		if code != http.StatusBadRequest {
			t.Errorf("%s %s %.80s: %d, want 400: %s", c.method, c.path, c.body, code, data)
			continue
		}
		var body ErrorBody
		if err := json.Unmarshal(data, &body); err != nil || len(body.Errors) == 0 {
			t.Errorf("%s %s %.80s: no errors[] in %s", c.method, c.path, c.body, data)
			continue
		}
		for _, e := range body.Errors {
			switch {
			case e.Reason == "" || e.Fix == "":
				t.Errorf("%s %s %.80s: field %q has reason %q, fix %q: want both", c.method, c.path, c.body, e.Field, e.Reason, e.Fix)
			case strings.Contains(e.Reason, e.Fix):
				t.Errorf("%s %s %.80s: field %q: the reason %q holds the fix %q: want them apart", c.method, c.path, c.body, e.Field, e.Reason, e.Fix)
			}
		}
	}
}
