package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/hist"
	"github.com/wpg-dev/wpg/internal/syncbuf"
	"github.com/wpg-dev/wpg/internal/testbed"
)

// TestFleetPrometheus is issue #25's flow on one machine with real parts:
// three senders as separate wpg send processes in three network
// namespaces (standing in for hosts), each --segment i/3 --metrics-listen
// on its LAN address, towards one wpg recv in a fourth; a real Prometheus
// (Debian's) in the receiver's namespace scrapes all four with a
// generated configuration and a temporary storage. After the run the
// summed frame counter Prometheus answers equals the merged report's
// frames (wpg report merge of the three) and the receiver's frames, the
// receiver saw no loss, duplicate or reordering across the three
// senders, and the merged lateness p99 is the p99 of the three
// histograms merged. The senders and the receiver run with one --job:
// Prometheus selects the senders' series and the receiver's by that job
// label, and the reports keep it (the receiver's) or the job identity
// (the senders', which wpg report merge checks).
func TestFleetPrometheus(t *testing.T) {
	prom := testbed.RequireTool(t, "prometheus", "prometheus")
	wpg := testbed.Wpg(t)
	lan := testbed.NewLAN(t, 4) // hosts 0-2 send, host 3 receives
	rx := lan.Hosts[3]
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const (
		segments    = 3
		count       = 30000
		metricsPort = 9479
		recvPort    = 9480
		promPort    = 9090
		jobName     = "fleet-e2e"
	)

	// Prometheus in the receiver's host, scraping the senders over the
	// LAN and the receiver on its loopback, every 500 ms; honor_labels
	// keeps wpg's job label (the job identity) instead of the scrape
	// job's: the --job of the senders and the receiver.
	var targets []string
	for _, h := range lan.Hosts[:segments] {
		targets = append(targets, fmt.Sprintf("%q", fmt.Sprintf("%s:%d", h.Addr.Addr(), metricsPort)))
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: 500ms
  scrape_timeout: 400ms
scrape_configs:
  - job_name: senders
    honor_labels: true
    static_configs:
      - targets: [%s]
  - job_name: receiver
    honor_labels: true
    static_configs:
      - targets: ["127.0.0.1:%d"]
`, strings.Join(targets, ", "), recvPort)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	promLog := &syncbuf.Buffer{}
	pcmd := rx.Command(ctx, prom, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", promPort), "--log.level=warn")
	pcmd.Stdout, pcmd.Stderr = promLog, promLog
	if err := pcmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = pcmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = pcmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = pcmd.Process.Kill()
			<-done
		}
	})
	api := &http.Client{Transport: &http.Transport{DialContext: rx.DialContext}, Timeout: 10 * time.Second}
	promURL := fmt.Sprintf("http://127.0.0.1:%d", promPort)
	waitReady(t, api, promURL+"/-/ready", promLog)

	// The receiver: it stops once all 30000 frames are in (or 10 s after
	// the last frame), and keeps its metrics up until the test has seen
	// Prometheus scrape its final counts (a Ctrl-C ends the linger).
	var recvOut bytes.Buffer
	var recvErr syncbuf.Buffer
	rcmd := rx.Command(ctx, wpg, "recv", "-i", rx.Iface, "--expect", strconv.Itoa(count), "--idle-timeout", "10s",
		"--metrics-listen", strconv.Itoa(recvPort), "--metrics-linger", "2m", "--job", jobName, "--json")
	rcmd.Stdout = &recvOut
	pr, pw := io.Pipe()
	rcmd.Stderr = io.MultiWriter(&recvErr, pw)
	if err := rcmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "receiving on") {
				close(ready)
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("wpg recv did not start: %s", recvErr.String())
	}

	// The three segments, each at a third of 30 kpps, its metrics on its
	// LAN address (not loopback: the user's explicit choice).
	type sender struct {
		cmd    *exec.Cmd
		out    bytes.Buffer
		errOut bytes.Buffer
	}
	var senders []*sender
	for i, h := range lan.Hosts[:segments] {
		s := &sender{}
		s.cmd = h.Command(ctx, wpg, "send", repoFile(t, "examples/udp64.wpg.yaml"), "-i", h.Iface, "--count", strconv.Itoa(count),
			"--rate", "30kpps", "--segment", fmt.Sprintf("%d/%d", i, segments),
			"--metrics-listen", fmt.Sprintf("%s:%d", h.Addr.Addr(), metricsPort), "--metrics-linger", "2m", "--job", jobName, "--json")
		s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.errOut
		if err := s.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		senders = append(senders, s)
	}
	// Every run lingers with its final counts until Prometheus has
	// scraped them (on a loaded machine a scrape may take seconds), then
	// a Ctrl-C ends the linger.
	final := func() bool {
		senders, err1 := promValue(api, promURL, fmt.Sprintf(`count(wpg_job_running{job=%q, segment!=""} == 0)`, jobName))
		receiver, err2 := promValue(api, promURL, fmt.Sprintf(`count(wpg_job_running{job=%q, segment=""} == 0)`, jobName))
		return err1 == nil && err2 == nil && senders == segments && receiver == 1
	}
	deadline := time.Now().Add(2 * time.Minute)
	for !final() {
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus did not see every run end within 2 minutes; its targets: %s", promTargets(api, promURL))
		}
		time.Sleep(250 * time.Millisecond)
	}
	for _, s := range senders {
		_ = s.cmd.Process.Signal(os.Interrupt)
	}
	_ = rcmd.Process.Signal(os.Interrupt)
	var files []string
	for i, s := range senders {
		if err := s.cmd.Wait(); err != nil {
			t.Fatalf("segment %d: %v\n%s", i, err, s.errOut.String())
		}
		f := filepath.Join(dir, fmt.Sprintf("seg%d.json", i))
		if err := os.WriteFile(f, s.out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if err := rcmd.Wait(); err != nil {
		t.Fatalf("wpg recv: %v\n%s\n%s", err, recvErr.String(), recvOut.String())
	}
	pw.Close()
	var rres struct {
		Job                                            string
		Frames, Lost, Duplicated, Reordered, Corrupted uint64
		Streams                                        []struct{ Frames, Lost, Reordered uint64 }
	}
	if err := json.Unmarshal(recvOut.Bytes(), &rres); err != nil {
		t.Fatalf("recv --json: %v\n%s", err, recvOut.String())
	}

	// wpg report merge of the three segments.
	mout, merr, code := run(t, dir, append([]string{"report", "merge"}, files...)...)
	if code != 0 {
		t.Fatalf("wpg report merge: exit %d: %s", code, merr)
	}
	var merged struct {
		Job               string          `json:"job"`
		Frames            uint64          `json:"frames"`
		P99JitterNs       int64           `json:"p99_jitter"`
		LatenessHistogram json.RawMessage `json:"lateness_histogram"`
		Inputs            []struct {
			Segment string `json:"segment"`
		} `json:"inputs"`
	}
	if err := json.Unmarshal([]byte(mout), &merged); err != nil {
		t.Fatal(err)
	}

	// The reports: the senders' keep the job identity (merge checks it),
	// the receiver's the name.
	if !regexp.MustCompile(`^wpg-[0-9a-f]{16}$`).MatchString(merged.Job) || rres.Job != jobName {
		t.Errorf("the merged report's job %q, want the job identity; the receiver's %q, want %s", merged.Job, rres.Job, jobName)
	}
	// Prometheus's sum of the segments' frame counters (their last
	// samples: the senders have ended, their series are stale), and the
	// receiver's, each selected by the job label.
	sum := promQuery(t, api, promURL, fmt.Sprintf(`sum(last_over_time(wpg_job_frames_total{job=%q}[5m]))`, jobName))
	series := promQuery(t, api, promURL, fmt.Sprintf(`count(last_over_time(wpg_job_frames_total{job=%q}[5m]))`, jobName))
	rxProm := promQuery(t, api, promURL, fmt.Sprintf(`sum(last_over_time(wpg_job_receiver_frames_total{job=%q}[5m]))`, jobName))
	grants := promQuery(t, api, promURL, fmt.Sprintf(`sum(last_over_time(wpg_job_grant_lateness_seconds_count{job=%q}[5m]))`, jobName))
	// The documented comparison (docs/distributed.md): the senders' sum
	// less the receiver's, by job, is 0 when nothing was lost.
	diff := promQuery(t, api, promURL, fmt.Sprintf(`sum by (job) (last_over_time(wpg_job_frames_total{job=%q}[5m])) - sum by (job) (last_over_time(wpg_job_receiver_frames_total{job=%q}[5m]))`, jobName, jobName))
	if diff != 0 {
		t.Errorf("senders' frames - receiver's frames by job = %v, want 0", diff)
	}
	t.Logf("Prometheus: sum of %v segments' wpg_job_frames_total = %v; receiver %v; merged report %d; receiver's report %d (lost %d, duplicated %d, reordered %d)",
		series, sum, rxProm, merged.Frames, rres.Frames, rres.Lost, rres.Duplicated, rres.Reordered)
	if series != segments || sum != float64(merged.Frames) || sum != float64(rres.Frames) || sum != count || rxProm != sum {
		t.Errorf("Prometheus sums %v over %v segments, the receiver's metric %v; the merged report has %d frames, the receiver %d; want %d everywhere",
			sum, series, rxProm, merged.Frames, rres.Frames, count)
	}
	if rres.Lost != 0 || rres.Duplicated != 0 || rres.Reordered != 0 || rres.Corrupted != 0 {
		t.Errorf("the receiver saw %d lost, %d duplicated, %d reordered, %d corrupted across the three senders", rres.Lost, rres.Duplicated, rres.Reordered, rres.Corrupted)
	}
	if len(merged.Inputs) != segments {
		t.Errorf("merged %d inputs", len(merged.Inputs))
	}

	// The merged p99 is the p99 of the segments' histograms merged, and
	// Prometheus counted the same grants.
	var hs []*hist.Hist
	for _, f := range files {
		b, _ := os.ReadFile(f)
		var r struct {
			LatenessHistogram json.RawMessage `json:"lateness_histogram"`
		}
		var h hist.Hist
		if err := json.Unmarshal(b, &r); err != nil || json.Unmarshal(r.LatenessHistogram, &h) != nil {
			t.Fatalf("%s: no lateness histogram", f)
		}
		hs = append(hs, &h)
	}
	all := hist.Merged(hs[0].Lo(), hs[0].Hi(), hs...)
	if merged.P99JitterNs != all.Quantile(99) || grants != float64(all.Count()) {
		t.Errorf("merged p99 %d, the merged histograms' %d; Prometheus counted %v grants, the histograms %d", merged.P99JitterNs, all.Quantile(99), grants, all.Count())
	}
	t.Logf("merged lateness p99 %v = p99 of the merged histograms (%d grants)", time.Duration(merged.P99JitterNs), all.Count())
}

// waitReady polls Prometheus's readiness endpoint.
func waitReady(t *testing.T, c *http.Client, u string, log *syncbuf.Buffer) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := c.Get(u)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("prometheus did not get ready: %s", log.String())
}

// promValue is the one number of an instant query.
func promValue(c *http.Client, base, q string) (float64, error) {
	resp, err := c.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" {
		return 0, fmt.Errorf("query %s: %v %s %s", q, err, r.Status, r.Error)
	}
	if len(r.Data.Result) != 1 {
		return 0, fmt.Errorf("query %s: %d results, want 1", q, len(r.Data.Result))
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	return strconv.ParseFloat(s, 64)
}

// promQuery is promValue that ends the test when there is no one number.
func promQuery(t *testing.T, c *http.Client, base, q string) float64 {
	t.Helper()
	v, err := promValue(c, base, q)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// promTargets is Prometheus's view of its targets: their health and last
// error, for a failure's message.
func promTargets(c *http.Client, base string) string {
	resp, err := c.Get(base + "/api/v1/targets")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return string(b)
}
