//go:build linux

package server

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/peer/peertest"
)

// TestFinishedJobPageReceiverCounts: the page of a finished shm job with
// start_receiver shows its receiver's counts from the report (frames, lost,
// duplicated, corrupted, latency), in the Receiver section shown without
// script. They came only from the live event stream, so the page a running
// job reloads to at its end lost them ("–").
func TestFinishedJobPageReceiverCounts(t *testing.T) {
	ts := newTest(t, Options{Launcher: peertest.Launch})
	v := ts.create(`{"backend": "shm", "size": "1KiB", "start_receiver": true, "count": 5000}`)
	if got := ts.wait(v.ID); got.Status != StatusDone {
		t.Fatalf("%+v", got)
	}
	code, data := ts.do("GET", fmt.Sprintf("/jobs/%d", v.ID), nil)
	if code != 200 {
		t.Fatalf("job page: %d %s", code, data)
	}
	page := string(data)
	if !strings.Contains(page, `<section id="receiver">`) {
		t.Errorf("the Receiver section is hidden on the finished job's page")
	}
	m := regexp.MustCompile(`<span id="rx-counts">([^<]*)</span>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no rx-counts on the page")
	}
	if want := "5,000 frames, 0 lost, 0 duplicated, 0 corrupted, latency p50 "; !strings.HasPrefix(m[1], want) || !strings.Contains(m[1], " p99 ") {
		t.Errorf("receiver counts %q; want them to start with %q and carry the p99", m[1], want)
	}
	// a job without a receiver of its own keeps the section hidden
	n := ts.create(`{"count": 100}`)
	ts.wait(n.ID)
	if _, data := ts.do("GET", fmt.Sprintf("/jobs/%d", n.ID), nil); !strings.Contains(string(data), `<section id="receiver" hidden>`) {
		t.Errorf("a null job's page shows a Receiver section")
	}
}
