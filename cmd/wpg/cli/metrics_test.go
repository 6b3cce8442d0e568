package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// freePort is a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// lingering runs wpg with args (a --metrics-listen on port and a long
// --metrics-linger among them) until its endpoint says the run ended
// (wpg_job_running 0), and returns that scrape; then it interrupts the
// linger and returns the command's output and exit code too.
func lingering(t *testing.T, port string, args ...string) (scrape, out, errs string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var o, e bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- Main(ctx, args, &o, &e) }()
	for {
		select {
		case code := <-done:
			t.Fatalf("wpg %s: exit %d before its endpoint said the run ended: %s", strings.Join(args, " "), code, e.String())
		case <-time.After(50 * time.Millisecond):
		}
		resp, err := http.Get("http://127.0.0.1:" + port + "/metrics")
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if regexp.MustCompile(`(?m)^wpg_job_running\{.*\} 0$`).Match(b) {
			scrape = string(b)
			break
		}
	}
	cancel() // ends the linger
	code = <-done
	return scrape, o.String(), e.String(), code
}

// TestJobLabel (issue #25 item 2): wpg recv --job NAME labels every series
// of the receiver's --metrics-listen with job NAME and writes it in the
// report, so that the receiver's series of one job can be selected beside
// its senders'; wpg send --job NAME labels the sender's series with it,
// while the report's job stays the job identity that wpg report merge
// checks. A --job that is no plain label value is refused.
func TestJobLabel(t *testing.T) {
	labels := regexp.MustCompile(`(?m)^wpg_job_\w+\{([^}]*)\}`)
	allJob := func(t *testing.T, scrape, want string) {
		t.Helper()
		ms := labels.FindAllStringSubmatch(scrape, -1)
		if len(ms) == 0 {
			t.Fatalf("no wpg series:\n%s", scrape)
		}
		for _, m := range ms {
			if !strings.Contains(m[1], `job="`+want+`"`) {
				t.Errorf("series %s: want job=%q", m[0], want)
			}
		}
	}

	// The receiver, fed through a FIFO.
	fifo := filepath.Join(t.TempDir(), "f")
	port := freePort(t)
	sent := make(chan string, 1)
	go func() {
		time.Sleep(200 * time.Millisecond)
		_, errs, code := wpg(t, "send", "--backend", "pipe", "--fifo", fifo, "--size", "64", "--count", "1000")
		sent <- fmt.Sprintf("exit %d: %s", code, errs)
	}()
	scrape, out, errs, code := lingering(t, port, "recv", "--backend", "pipe", "--fifo", fifo, "--job", "nightly-1",
		"--metrics-listen", port, "--metrics-linger", "1m", "--json")
	t.Logf("send: %s", <-sent)
	if code != 0 {
		t.Fatalf("recv: exit %d: %s", code, errs)
	}
	allJob(t, scrape, "nightly-1")
	if !strings.Contains(scrape, `wpg_job_receiver_frames_total{backend="pipe",job="nightly-1"`) {
		t.Errorf("no receiver frames of job nightly-1:\n%s", scrape)
	}
	var r struct {
		Job    string `json:"job"`
		Frames uint64 `json:"frames"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Job != "nightly-1" || r.Frames != 1000 {
		t.Errorf("recv report: job %q, %d frames (%v), want nightly-1 and 1000", r.Job, r.Frames, err)
	}
	// wpg report merge keeps the receivers' job and refuses receivers of
	// different jobs.
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"), filepath.Join(dir, "c.json")
	other := strings.Replace(out, `"job": "nightly-1"`, `"job": "nightly-2"`, 1)
	for f, s := range map[string]string{a: out, b: out, c: other} {
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if other == out {
		t.Fatalf("the report has no \"job\": \"nightly-1\":\n%s", out)
	}
	mout, errs, code := wpg(t, "report", "merge", a, b)
	if err := json.Unmarshal([]byte(mout), &r); err != nil || code != 0 || r.Job != "nightly-1" || r.Frames != 2000 {
		t.Errorf("merge: exit %d, job %q, %d frames (%v): %s", code, r.Job, r.Frames, err, errs)
	}
	if _, errs, code := wpg(t, "report", "merge", a, c); code != ExitUsage || !strings.Contains(errs, `of job "nightly-2"`) {
		t.Errorf("merge of two jobs: exit %d: %s", code, errs)
	}

	// The sender: its series carry the name, its report the identity.
	port = freePort(t)
	scrape, out, errs, code = lingering(t, port, "send", "--backend", "null", "--count", "1000", "--job", "nightly-1",
		"--metrics-listen", port, "--metrics-linger", "1m", "--json")
	if code != 0 {
		t.Fatalf("send: exit %d: %s", code, errs)
	}
	allJob(t, scrape, "nightly-1")
	if err := json.Unmarshal([]byte(out), &r); err != nil || !regexp.MustCompile(`^wpg-[0-9a-f]{16}$`).MatchString(r.Job) {
		t.Errorf("send report: job %q (%v), want the job identity", r.Job, err)
	}

	checkUsage(t, []usageCase{
		{"recv space", []string{"recv", "--backend", "pipe", "--job", "night 1"}, []string{`--job "night 1"`, "letters, digits", "e.g. --job nightly-1"}},
		{"recv quote", []string{"recv", "--backend", "pipe", "--job", `a"b`}, []string{"--job", "the senders' job identity"}},
		{"recv long", []string{"recv", "--backend", "pipe", "--job", strings.Repeat("a", 64)}, []string{"--job", "1 to 63"}},
		{"send no metrics", []string{"send", "--backend", "null", "--count", "1", "--job", "nightly-1"}, []string{"--job nightly-1", "add --metrics-listen"}},
		{"send dash", []string{"send", "--backend", "null", "--count", "1", "--job", "-x", "--metrics-listen", "0"}, []string{"--job"}},
	})
}

// --metrics-linger without --metrics-listen lingers nothing: refused as
// --job is, not ignored.
func TestMetricsLingerAlone(t *testing.T) {
	for _, args := range [][]string{
		{"send", "--backend", "null", "--count", "1", "--metrics-linger", "30s"},
		{"recv", "--listen", filepath.Join(t.TempDir(), "s.sock"), "--metrics-linger", "30s"},
	} {
		_, errs, code := runCLI(t, args...)
		if code != ExitUsage || !strings.Contains(errs, "--metrics-linger 30s: keeps the --metrics-listen endpoint up after the run, and none is asked for: add --metrics-listen ADDR, or drop --metrics-linger") {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
	}
}

// --metrics-linger is bounded: 1000h would keep a finished run (a pod)
// up for six weeks.
func TestMetricsLingerBounded(t *testing.T) {
	for _, args := range [][]string{
		{"send", "--backend", "null", "--count", "1", "--metrics-listen", "0", "--metrics-linger", "1000h"},
		{"recv", "--listen", filepath.Join(t.TempDir(), "s.sock"), "--metrics-listen", "0", "--metrics-linger", "1000h"},
	} {
		_, errs, code := runCLI(t, args...)
		if code != ExitUsage || !strings.Contains(errs, "--metrics-linger 1000h0m0s: at most 1h0m0s; it need only cover the scrape interval (e.g. 30s)") {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
	}
}

// A --metrics-listen that is no address is a usage error before the run
// starts, with one fix: it was found once the run had started (exit 1),
// its fix followed by "give a free port (0: any) or another address".
func TestMetricsListenMalformed(t *testing.T) {
	for _, cmd := range []string{"send", "recv"} {
		args := []string{cmd, "--metrics-listen", "99999"}
		if cmd == "send" {
			args = append(args, "--backend", "null", "--count", "1")
		} else {
			args = append(args, "--listen", filepath.Join(t.TempDir(), "s.sock"))
		}
		_, errs, code := runCLI(t, args...)
		if code != ExitUsage || !strings.Contains(errs, `--metrics-listen 99999: port "99999" is not a port number: give 1 to 65535 (0: any free port)`) || strings.Contains(errs, "give a free port") {
			t.Errorf("%s: exit %d, %q", cmd, code, errs)
		}
	}
}
