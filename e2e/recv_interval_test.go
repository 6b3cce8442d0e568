package e2e

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// recvWithSender runs `wpg recv` with args listening on a socket and a
// paced `wpg send --connect` into it, and returns recv's output.
func recvWithSender(t *testing.T, args ...string) (string, string) {
	t.Helper()
	wpg := testbed.Wpg(t)
	sock := filepath.Join(t.TempDir(), "rx.sock")
	recv := exec.Command(wpg, append([]string{"recv", "--backend", "shm", "--listen", sock}, args...)...)
	var out, errb bytes.Buffer
	recv.Stdout, recv.Stderr = &out, &errb
	if err := recv.Start(); err != nil {
		t.Fatal(err)
	}
	send := exec.Command(wpg, "send", "--backend", "shm", "--connect", sock, "--size", "512", "--rate", "20kpps", "--duration", "1500ms")
	var serr bytes.Buffer
	send.Stderr = &serr
	// The receiver listens once it has started: retry the connect briefly.
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		serr.Reset()
		err := send.Run()
		if err == nil {
			break
		}
		if time.Now().After(end) || !strings.Contains(serr.String(), "rx.sock") {
			recv.Process.Kill()
			t.Fatalf("send: %v: %s", err, serr.String())
		}
		send = exec.Command(send.Path, send.Args[1:]...)
		send.Stderr = &serr
	}
	if err := recv.Wait(); err != nil {
		t.Fatalf("recv: %v: %s", err, errb.String())
	}
	return out.String(), errb.String()
}

// TestRecvIntervalSubSecond: `wpg recv --interval 200ms` closes an
// interval every 200 ms on the loop's schedule, each with the one-way
// latency p99 of its frames, and the intervals still sum to the totals.
func TestRecvIntervalSubSecond(t *testing.T) {
	out, _ := recvWithSender(t, "--interval", "200ms", "--json")
	checkIntervals(t, "recv --interval 200ms", []byte(out), true)
	var d struct {
		Intervals []struct {
			End          float64 `json:"end"`
			LatencyP99Ns int64   `json:"latency_p99_ns"`
		} `json:"intervals"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Intervals) < 4 {
		t.Fatalf("%d intervals of 200 ms in a 1.5 s run: %s", len(d.Intervals), out)
	}
	withLatency := 0
	for k, in := range d.Intervals[:len(d.Intervals)-1] {
		if in.End < 0.2*float64(k+1)-1e-9 {
			t.Errorf("interval %d ends at %v s, before its period ends (%v s)", k, in.End, 0.2*float64(k+1))
		}
		if in.LatencyP99Ns > 0 {
			withLatency++
		}
	}
	if withLatency == 0 {
		t.Errorf("no interval carries a latency p99: %s", out)
	}
}

// The text form prints a line per interval with the latency p99, and an
// interval below the floor is refused with the fix.
func TestRecvIntervalLines(t *testing.T) {
	out, _ := recvWithSender(t, "--interval", "250ms")
	if n := strings.Count(out, "latency p99"); n < 2 {
		t.Errorf("%d interval lines with a latency p99:\n%s", n, out)
	}
	_, errs, code := run(t, t.TempDir(), "recv", "--backend", "shm", "--listen", "@wpg-e2e-never", "--interval", "10ms")
	if code != 2 || !strings.Contains(errs, "--interval 10ms: give 50ms or more") {
		t.Errorf("--interval 10ms: exit %d, %s", code, errs)
	}
}
