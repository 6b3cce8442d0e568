//go:build linux

package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	_ "github.com/wpg-dev/wpg/backend/shm"
	"github.com/wpg-dev/wpg/peer/peertest"
	"github.com/wpg-dev/wpg/recv"
)

// TestMain lets the test binary act as the receiver of jobs with
// start_receiver (`wpg recv --listen`).
func TestMain(m *testing.M) { peertest.Main(m) }

// TestReceiverLive: an shm job with start_receiver shows its receiver's
// counts growing in the event stream before the end (the receiver's
// progress messages), /metrics exports them while it runs, the last
// snapshot carries the receiver's answer, and every stored sample carries
// the loss so far.
func TestReceiverLive(t *testing.T) {
	ts := newTest(t, Options{Launcher: peertest.Launch})
	v := ts.create(`{"backend": "shm", "size": "1KiB", "start_receiver": true, "rate": "20kpps", "duration": 2500000000}`)
	resp, err := ts.hs.Client().Get(fmt.Sprintf("%s/api/v1/jobs/%d/events", ts.hs.URL, v.ID))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var running []uint64 // the receiver's frames in snapshots before the end
	var last *ReceiverView
	scraped := false
	for ev := range readEvents(t, resp.Body) {
		if ev.name != "snapshot" {
			continue
		}
		var s SnapshotView
		if err := json.Unmarshal(ev.data, &s); err != nil {
			t.Fatal(err)
		}
		if s.Receiver == nil {
			continue
		}
		last = s.Receiver
		if s.Done {
			continue
		}
		running = append(running, s.Receiver.Frames)
		if !scraped && s.Receiver.Frames > 0 {
			scraped = true
			code, body := ts.do("GET", "/metrics", nil)
			want := fmt.Sprintf(`wpg_job_receiver_frames_total{backend="shm",job="%d"`, v.ID)
			if code != 200 || !strings.Contains(string(body), want) || !strings.Contains(string(body), "wpg_job_receiver_lost{") {
				t.Errorf("/metrics while the job runs: %d, no %s … or wpg_job_receiver_lost", code, want)
			}
		}
	}
	if len(running) < 2 || running[len(running)-1] <= running[0] {
		t.Fatalf("receiver frames in the running snapshots: %v; want them growing before the end", running)
	}
	ts.wait(v.ID)
	code, data := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d/report", v.ID), nil)
	if code != 200 {
		t.Fatalf("report: %d %s", code, data)
	}
	var rep struct {
		Frames       uint64      `json:"frames"`
		Verification recv.Result `json:"verification"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if last == nil || !last.Final || last.Frames != rep.Verification.Frames || last.Frames != rep.Frames {
		t.Fatalf("last receiver snapshot %+v; report: %d frames sent, %d received", last, rep.Frames, rep.Verification.Frames)
	}
	xs, err := ts.s.store.Samples(t.Context(), v.ID)
	if err != nil || len(xs) < 2 {
		t.Fatalf("samples: %v %v", xs, err)
	}
	for _, x := range xs {
		if x.Lost == nil {
			t.Errorf("sample %d has no loss: %+v", x.T, x)
		}
	}
	if xs[1].LatencyP99Ns == 0 {
		t.Errorf("a whole second of an shm job has no receiver latency: %+v", xs[1])
	}
	if x := xs[len(xs)-1]; x.Lost == nil || *x.Lost != int64(rep.Verification.Lost) {
		t.Errorf("last sample %+v; the report's lost %d", x, rep.Verification.Lost)
	}
}

// TestBrowserReceiverChart: the job page of an shm job with
// start_receiver shows the Receiver section, its charts growing from the
// event stream while the job runs, and from the stored samples after.
func TestBrowserReceiverChart(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a browser for a few seconds: not under -short")
	}
	ctx := browser(t)
	ts := newTest(t, Options{Launcher: peertest.Launch})
	v := ts.create(`{"backend": "shm", "size": "1KiB", "start_receiver": true, "rate": "10kpps", "duration": 4000000000}`)
	page := fmt.Sprintf("%s/jobs/%d", ts.hs.URL, v.ID)
	if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, "the receiver's live points", `!document.getElementById("receiver").hidden && (window.wpg.rx || 0) >= 3`, 20*time.Second)
	if s := eval[string](t, ctx, `document.getElementById("rx-counts").textContent`); !strings.Contains(s, " frames, ") || !strings.Contains(s, " lost") {
		t.Errorf("receiver counts %q", s)
	}
	shot(t, ctx, "job-receiver")
	ts.wait(v.ID)
	// The page reloads itself on the report event; a navigation that
	// meets that reload is aborted (net::ERR_ABORTED), so try again.
	for try := 0; ; try++ {
		err := chromedp.Do(ctx, chromedp.Navigate(page))
		if err == nil {
			break
		}
		if try == 4 || !strings.Contains(err.Error(), "ERR_ABORTED") {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	until(t, ctx, "the receiver section from the samples", `!document.getElementById("receiver").hidden && !!window.wpg.charts["chart-loss"]`, 10*time.Second)
}
