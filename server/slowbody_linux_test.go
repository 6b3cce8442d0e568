package server

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// slowPost sends the head of a POST with a body of 200 bytes, then one
// byte of it every 100 ms, and returns the status line the server
// answers (within 20 s).
func slowPost(t *testing.T, addr, path, contentType string) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: 200\r\n\r\n", path, addr, contentType)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatalf("POST %s with a slow body: no answer: %v", path, err)
	}
	return strings.TrimSpace(line)
}

// TestSlowBody: a request body that trickles in (a byte every 100 ms) is
// cut off after Options.BodyTimeout with 408, on the API and the forms
// alike, so slow clients cannot hold connections forever; the deadline
// is the body's only: an event stream lives on past it.
func TestSlowBody(t *testing.T) {
	ts := newTest(t, Options{BodyTimeout: 500 * time.Millisecond})
	addr := ts.hs.Listener.Addr().String()
	for _, rq := range []struct{ path, ct string }{
		{"/api/v1/jobs", "application/json"},
		{"/api/v1/preview", "application/json"},
		{"/jobs", "application/x-www-form-urlencoded"},
		{"/login", "application/x-www-form-urlencoded"},
	} {
		if line := slowPost(t, addr, rq.path, rq.ct); !strings.Contains(line, " 408 ") {
			t.Errorf("POST %s with a slow body: %q; want 408", rq.path, line)
		}
	}
	// An event stream is not a body: it goes on past the deadline.
	v := ts.create(`{"rate": "1kpps"}`)
	resp, err := ts.hs.Client().Get(fmt.Sprintf("%s/api/v1/jobs/%d/events", ts.hs.URL, v.ID))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n, end := 0, time.Now().Add(1500*time.Millisecond)
	for ev := range readEvents(t, resp.Body) {
		if ev.name == "snapshot" {
			n++
		}
		if time.Now().After(end) {
			break
		}
	}
	if time.Now().Before(end) {
		t.Errorf("the event stream ended after %d snapshots, before 1.5 s (3 body timeouts)", n)
	}
	ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", v.ID), nil)
	ts.wait(v.ID)
	if code, _ := ts.do("POST", "/api/v1/preview", `{"frames": 1}`); code != http.StatusOK {
		t.Errorf("a quick body after the slow ones: %d", code)
	}
}
