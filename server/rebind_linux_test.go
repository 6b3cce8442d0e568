package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestHostCheckRebinding: without a token, a request whose Host is not a
// loopback name or address (a DNS-rebinding page: evil.example resolved to
// 127.0.0.1) is refused before it reaches any handler, pages and API
// alike, and starts no job; loopback names and addresses pass. With a
// token the token guards, whatever the Host.
func TestHostCheckRebinding(t *testing.T) {
	ts := newTest(t, Options{})
	port := ts.hs.Listener.Addr().String()[strings.LastIndex(ts.hs.Listener.Addr().String(), ":"):]
	for _, host := range []string{"evil.example" + port, "evil.example", "198.18.0.1" + port, "127.0.0.1.nip.io" + port, "localhost.evil.example" + port} {
		for _, rq := range []struct{ method, path, body string }{
			{"POST", "/api/v1/jobs", `{"backend": "pcapfile", "output": "/tmp/x/evil.pcap", "count": 1}`},
			{"GET", "/api/v1/jobs", ""},
			{"POST", "/api/v1/preview", `{"template": "streams: [{name: x}]"}`},
			{"GET", "/", ""},
			{"GET", "/metrics", ""},
			{"GET", "/healthz", ""},
		} {
			var body any
			if rq.body != "" {
				body = rq.body
			}
			code, data := ts.do(rq.method, rq.path, body, "Host", host)
			if code != http.StatusForbidden || !strings.Contains(string(data), "is not a loopback name or address") {
				t.Errorf("%s %s with Host %s: %d %.200s; want 403 naming the Host", rq.method, rq.path, host, code, data)
			}
		}
	}
	code, data := ts.do("GET", "/api/v1/jobs", nil)
	var list struct{ Total int }
	if code != http.StatusOK || json.Unmarshal(data, &list) != nil || list.Total != 0 {
		t.Errorf("after the refused requests: %d %s; want no job", code, data)
	}
	for _, host := range []string{"127.0.0.1" + port, "localhost" + port, "LOCALHOST" + port, "[::1]" + port, "127.0.0.2" + port, "wpg.localhost" + port, "localhost"} {
		if code, data := ts.do("GET", "/api/v1/jobs", nil, "Host", host); code != http.StatusOK {
			t.Errorf("Host %s: %d %.200s; want 200", host, code, data)
		}
	}

	tk := newTest(t, Options{Token: testToken})
	if code, data := tk.do("GET", "/api/v1/jobs", nil, "Host", "wpg.example.org"+port); code != http.StatusOK {
		t.Errorf("with a token, Host wpg.example.org: %d %.200s; want 200", code, data)
	}
}
