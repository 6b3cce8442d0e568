package metrics_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	_ "github.com/wpg-dev/wpg/backend/null"
	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/metrics"
	"github.com/wpg-dev/wpg/recv"
)

// scrape reads an endpoint's metrics as Prometheus parses them.
func scrape(t *testing.T, url, host string) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s: %s", url, resp.Status, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// value returns the sample of family name whose labels include want.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no %s", name)
	}
next:
	for _, m := range f.Metric {
		for k, v := range want {
			found := false
			for _, lp := range m.Label {
				if lp.GetName() == k && lp.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	t.Fatalf("%s: no sample with %v", name, want)
	return 0
}

// TestRunEndpoint serves a paced run's metrics while it runs and after:
// the frame counter with the job, name, backend and segment labels, the
// lateness histogram, and at the end the report's counts.
func TestRunEndpoint(t *testing.T) {
	spec := job.NewSpec()
	spec.Rate = "20kpps"
	spec.Count = 2000
	run, err := job.Start(context.Background(), spec, job.Env{})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := metrics.Listen("127.0.0.1:0", metrics.Registry(metrics.NewRun(run, "wpg-test", "default", "null"), "1/3"))
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	labels := map[string]string{"job": "wpg-test", "name": "default", "backend": "null", "segment": "1/3"}
	live := scrape(t, ep.URL(), "")
	if got := value(t, live, "wpg_job_running", labels); got != 1 && run.Report() == nil {
		t.Errorf("wpg_job_running %v while it runs", got)
	}
	rep := run.Report()
	end := scrape(t, ep.URL(), "")
	if got := value(t, end, "wpg_job_frames_total", labels); got != float64(rep.Frames) || got != 2000 {
		t.Errorf("wpg_job_frames_total %v, the report's %d", got, rep.Frames)
	}
	if got := value(t, end, "wpg_job_running", labels); got != 0 {
		t.Errorf("wpg_job_running %v after the end", got)
	}
	h := end["wpg_job_grant_lateness_seconds"]
	if h == nil || len(h.Metric) != 1 || h.Metric[0].Histogram == nil {
		t.Fatalf("no lateness histogram: %v", h)
	}
	if n := h.Metric[0].Histogram.GetSampleCount(); n == 0 {
		t.Error("lateness histogram empty")
	}
	if got := value(t, end, "wpg_job_stream_frames_total", map[string]string{"stream": "0", "segment": "1/3"}); got != 2000 {
		t.Errorf("stream 0: %v frames", got)
	}
}

// TestEndpointHost refuses a request naming another host on a loopback
// endpoint (a page that rebinds its name to 127.0.0.1) and any method but
// GET and HEAD.
func TestEndpointHost(t *testing.T) {
	ep, err := metrics.Listen(":0", metrics.Registry(metrics.NewReceiver("j", "n", "afpacket"), ""))
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	if !strings.HasPrefix(ep.Addr().String(), "127.0.0.1:") {
		t.Fatalf(":0 listens on %s, want loopback", ep.Addr())
	}
	for _, c := range []struct {
		method, host string
		code         int
	}{
		{http.MethodGet, "", 200},
		{http.MethodGet, "localhost", 200},
		{http.MethodGet, "evil.example:80", 403},
		{http.MethodPost, "", 405},
	} {
		req, _ := http.NewRequest(c.method, ep.URL(), nil)
		if c.host != "" {
			req.Host = c.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("%s Host %q: %d, want %d", c.method, c.host, resp.StatusCode, c.code)
		}
	}
}

// TestReceiver counts a receiver's progress, and its result once
// finished, with the latency histogram.
func TestReceiver(t *testing.T) {
	tr := recv.NewTracker()
	for i := range uint64(100) {
		tr.Observe(0, i, 1_000, 1_000+int64(1000+i*10), 64)
	}
	r := metrics.NewReceiver("j", "n", "afpacket")
	r.Update(recv.Progress{Frames: 50, Bytes: 3200, Elapsed: time.Second})
	ep, err := metrics.Listen("127.0.0.1:0", metrics.Registry(r, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	l := map[string]string{"job": "j"}
	if got := value(t, scrape(t, ep.URL(), ""), "wpg_job_receiver_frames_total", l); got != 50 {
		t.Errorf("progress: %v frames", got)
	}
	r.Finish(tr.Result())
	end := scrape(t, ep.URL(), "")
	if got := value(t, end, "wpg_job_receiver_frames_total", l); got != 100 {
		t.Errorf("finished: %v frames", got)
	}
	if got := value(t, end, "wpg_job_receiver_one_way_latency_seconds", l); got != 100 {
		t.Errorf("latency histogram: %v samples", got)
	}
	if got := value(t, end, "wpg_job_receiver_stream_frames_total", map[string]string{"stream": "0"}); got != 100 {
		t.Errorf("stream 0: %v", got)
	}
}

// ListenAddr puts an address without a host on loopback; a host given is
// the user's choice.
func ExampleListenAddr() {
	for _, s := range []string{"9479", ":9479", "0.0.0.0:9479", "[::1]:0"} {
		a, err := metrics.ListenAddr(s)
		fmt.Println(a, err)
	}
	// Output:
	// 127.0.0.1:9479 <nil>
	// 127.0.0.1:9479 <nil>
	// 0.0.0.0:9479 <nil>
	// [::1]:0 <nil>
}
