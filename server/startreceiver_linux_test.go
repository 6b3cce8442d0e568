package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed"
	"github.com/wpg-dev/wpg/recv"
)

// TestStartReceiverRefusedWhereNoneCanBe: start_receiver on a backend no
// receiver can follow is a 400 that names start_receiver and what to give
// instead; it was silently ignored (null and afpacket ran without one).
func TestStartReceiverRefusedWhereNoneCanBe(t *testing.T) {
	ts := newTest(t, Options{})
	out := filepath.Join(t.TempDir(), "x.pcap")
	for _, tc := range []struct {
		name, body, reason, fix string
	}{
		{"null", `{"backend": "null", "start_receiver": true, "count": 10}`, "sends its frames nowhere a receiver could count them", "drop start_receiver, or send where a receiver counts the frames"},
		{"memcpy", `{"backend": "memcpy", "start_receiver": true, "count": 10}`, "sends its frames nowhere", "rx_interface"},
		{"pcapfile", `{"backend": "pcapfile", "output": "` + out + `", "start_receiver": true, "count": 10}`, "writes the frames into a capture file", "drop start_receiver"},
		{"afpacket on lo", `{"backend": "afpacket", "interface": "lo", "start_receiver": true, "count": 10}`, "interface lo is not a veth", "give rx_interface PORT, the port that receives"},
		{"afpacket on a missing interface", `{"backend": "afpacket", "interface": "wpgnone0", "start_receiver": true, "count": 10}`, "there is no interface wpgnone0 in the server's network namespace", "give interface IFACE, a port that is there (lo"},
		{"afpacket without a port", `{"backend": "afpacket", "start_receiver": true, "count": 10}`, "names neither the port it sends on nor the one that receives", "give interface IFACE"},
	} {
		code, data := ts.do("POST", "/api/v1/jobs", tc.body)
		var eb ErrorBody
		if code != http.StatusBadRequest || json.Unmarshal(data, &eb) != nil {
			t.Errorf("%s: %d %s; want 400", tc.name, code, data)
			continue
		}
		var found bool
		for _, e := range eb.Errors {
			if e.Field == "start_receiver" {
				found = true
				if !strings.Contains(e.Reason, tc.reason) || !strings.Contains(e.Fix, tc.fix) {
					t.Errorf("%s: reason %q, fix %q; want %q and %q", tc.name, e.Reason, e.Fix, tc.reason, tc.fix)
				}
			}
		}
		if !found {
			t.Errorf("%s: no start_receiver problem: %s", tc.name, data)
		}
	}
	// The form says the same, and offers start_receiver where it applies.
	resp, html := ts.page("POST", "/jobs", url.Values{"backend": {"afpacket"}, "opt.afpacket.interface": {"lo"}, "opt.afpacket.start_receiver": {"on"}, "count": {"10"}}, nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(html, "<code>start_receiver</code>") || !strings.Contains(html, "interface lo is not a veth") {
		t.Errorf("the form's afpacket job on lo with start_receiver: %d\n%s", resp.StatusCode, html)
	}
	for b, want := range map[string]bool{"afpacket": true, "shm": true, "null": false, "pcapfile": false} {
		if got := strings.Contains(html, `name="opt.`+b+`.start_receiver"`); got != want {
			t.Errorf("the form offers start_receiver for %s: %v, want %v", b, got, want)
		}
	}
	if !strings.Contains(html, `name="opt.afpacket.rx_interface"`) {
		t.Errorf("the form has no rx_interface for afpacket")
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the refused pcapfile job wrote %s", out)
	}
	if code, data := ts.do("GET", "/api/v1/jobs", nil); code != 200 || strings.Contains(string(data), `"id"`) {
		t.Errorf("a refused job was started: %s", data)
	}
}

// receiverJob starts a job of body, waits for its end and returns its
// spec as stored and its receiver's verification.
func receiverJob(t *testing.T, ts *testServer, body string) (map[string]any, recv.Result, uint64) {
	t.Helper()
	v := ts.create(body)
	defer func() {
		// Its page shows what the receiver counted.
		if _, data := ts.do("GET", fmt.Sprintf("/jobs/%d", v.ID), nil); !strings.Contains(string(data), `<section id="receiver">`) {
			t.Errorf("the page of %s has no Receiver section", body)
		}
	}()
	var spec map[string]any
	if err := json.Unmarshal(v.Spec, &spec); err != nil {
		t.Fatal(err)
	}
	if got := ts.wait(v.ID); got.Status != StatusDone {
		t.Fatalf("%s: %+v", body, got)
	}
	code, data := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d/report", v.ID), nil)
	var rep struct {
		Frames       uint64      `json:"frames"`
		Verification recv.Result `json:"verification"`
	}
	if code != 200 || json.Unmarshal(data, &rep) != nil {
		t.Fatalf("report: %d %s", code, data)
	}
	return spec, rep.Verification, rep.Frames
}

// TestStartReceiverOnVethPeer: afpacket with start_receiver on a veth
// receives on the veth's peer, here in another namespace: the stored spec
// names it (rx_interface, rx_netns) and the report has its counts.
func TestStartReceiverOnVethPeer(t *testing.T) {
	v := testbed.NewVeth(t)
	ts := newTest(t, Options{})
	spec, rx, sent := receiverJob(t, ts, `{"backend": "afpacket", "interface": "`+v.Outer+`", "start_receiver": true, "rate": "20kpps", "count": 2000}`)
	if spec["rx_interface"] != v.Inner || spec["rx_netns"] != v.NS {
		t.Errorf("spec %v: want rx_interface %s, rx_netns %s", spec, v.Inner, v.NS)
	}
	if sent != 2000 || rx.Frames != 2000 || rx.Lost != 0 {
		t.Errorf("sent %d; the receiver counted %d frames, %d lost", sent, rx.Frames, rx.Lost)
	}
	// A receiving port given is the one used.
	spec, rx, _ = receiverJob(t, ts, `{"backend": "afpacket", "interface": "`+v.Outer+`", "rx_interface": "`+v.Inner+`", "rx_netns": "`+v.NS+`", "start_receiver": true, "rate": "20kpps", "count": 500}`)
	if spec["rx_interface"] != v.Inner || rx.Frames != 500 {
		t.Errorf("with rx_interface: spec %v, %d frames received", spec, rx.Frames)
	}
}

// TestStartReceiverOnVethPeerSameNamespace: both ends of the veth in one
// namespace (netns): the peer is found there.
func TestStartReceiverOnVethPeerSameNamespace(t *testing.T) {
	testbed.RequireRoot(t)
	testbed.RequireTool(t, "ip", "iproute2")
	ns := fmt.Sprintf("wpgtest-rx%d", os.Getpid()%100000)
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	ip("netns", "add", ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	ip("-n", ns, "link", "add", "wpa", "type", "veth", "peer", "name", "wpb")
	for _, l := range []string{"wpa", "wpb", "lo"} {
		ip("-n", ns, "link", "set", l, "up")
	}
	peer, pns, err := vethPeer("wpa", ns)
	if err != nil || peer != "wpb" || pns != ns {
		t.Fatalf("vethPeer(wpa, %s): %q %q %v", ns, peer, pns, err)
	}
	ts := newTest(t, Options{})
	spec, rx, _ := receiverJob(t, ts, `{"backend": "afpacket", "netns": "`+ns+`", "interface": "wpa", "start_receiver": true, "rate": "20kpps", "count": 1000}`)
	if spec["rx_interface"] != "wpb" || spec["rx_netns"] != ns || rx.Frames != 1000 {
		t.Errorf("spec %v; %d frames received", spec, rx.Frames)
	}
}

// TestVethPeerOfNoVeth: lo is no veth; an interface that is not there is
// said apart (job.Validate names it).
func TestVethPeerOfNoVeth(t *testing.T) {
	var nv *notVethError
	if _, _, err := vethPeer("lo", ""); !errors.As(err, &nv) {
		t.Errorf("lo: %v", err)
	}
	if _, _, err := vethPeer("wpg-no-such0", ""); !errors.Is(err, errNoInterface) {
		t.Errorf("missing: %v", err)
	}
}
