//go:build linux

package server

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/report"
	"github.com/wpg-dev/wpg/sysinfo"
)

// TestLiveLateness: a paced job's event stream carries its lateness while
// it runs (from the start, and the window since the previous snapshot),
// and its samples the lateness of each second.
func TestLiveLateness(t *testing.T) {
	ts := newTest(t, Options{})
	v := ts.create(`{"rate": "2kpps", "duration": 2500000000}`)
	resp, err := ts.hs.Client().Get(fmt.Sprintf("%s/api/v1/jobs/%d/events", ts.hs.URL, v.ID))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var live, window bool
	for ev := range readEvents(t, resp.Body) {
		if ev.name != "snapshot" {
			continue
		}
		var s SnapshotView
		if err := json.Unmarshal(ev.data, &s); err != nil {
			t.Fatal(err)
		}
		if s.Lateness.Count > 0 && !s.Done {
			live = true
			if s.Lateness.MaxNs < s.Lateness.P99Ns || s.Lateness.P99Ns < s.Lateness.P50Ns {
				t.Errorf("lateness out of order: %+v", s.Lateness)
			}
		}
		if s.LatenessWindow.Count > 0 && s.LatenessWindow.Count < s.Lateness.Count {
			window = true
		}
	}
	if !live || !window {
		t.Errorf("no live lateness in the stream (from the start %v, window %v)", live, window)
	}
	ts.wait(v.ID)
	xs, err := ts.s.store.Samples(t.Context(), v.ID)
	if err != nil || len(xs) < 2 {
		t.Fatalf("samples: %v %v", xs, err)
	}
	for _, x := range xs {
		if x.LatenessMaxNs < x.LatenessP99Ns || x.LatenessP99Ns < x.LatenessP50Ns {
			t.Errorf("sample %d: lateness out of order: %+v", x.T, x)
		}
	}
	if xs[1].LatenessMaxNs == 0 {
		t.Errorf("a whole second of a paced run has no lateness: %+v", xs)
	}
	if xs[0].Lost != nil {
		t.Errorf("loss without a receiver: %+v", xs[0])
	}
}

// TestFinalSampleLoss: the last sample of a job that had a receiver
// carries the receiver's lost count; one without a receiver has none.
func TestFinalSampleLoss(t *testing.T) {
	last := job.Snapshot{Elapsed: 2 * time.Second, Frames: 2000, Bytes: 128000}
	end := job.Snapshot{Elapsed: 2500 * time.Millisecond, Frames: 2500, Bytes: 160000, Done: true}
	x, ok := finalSample(3, end, last, Sample{T: 2}, &report.Report{Verification: json.RawMessage(`{"schema": "wpg.recv/v1", "frames": 2497, "lost": 3}`)})
	if !ok || x.T != 3 || x.Lost == nil || *x.Lost != 3 || x.PPS != 1000 || x.BPS != 512000 {
		t.Errorf("with a receiver: %+v %v", x, ok)
	}
	if x, ok := finalSample(3, end, last, Sample{T: 2}, &report.Report{}); !ok || x.Lost != nil {
		t.Errorf("without a receiver: %+v %v", x, ok)
	}
	if _, ok := finalSample(3, last, last, Sample{T: 2}, &report.Report{}); ok {
		t.Error("a final sample with nothing new")
	}
}

// TestFinalSampleNoTrailingZero: a job whose frames all went before its
// last sample, with a receiver that counted loss, gets no sample at t+1
// with a zero rate (drawn as a drop to zero): the receiver's final count
// goes into the last sample, whose rates stay.
func TestFinalSampleNoTrailingZero(t *testing.T) {
	last := job.Snapshot{Elapsed: 2 * time.Second, Frames: 2000, Bytes: 128000}
	end := job.Snapshot{Elapsed: 2500 * time.Millisecond, Frames: 2000, Bytes: 128000, Done: true}
	lost := int64(1)
	prev := Sample{T: 2, Frames: 2000, Bytes: 128000, PPS: 1000, BPS: 512000, Lost: &lost, LatencyP99Ns: 7000}
	rep := &report.Report{Verification: json.RawMessage(`{"schema": "wpg.recv/v1", "frames": 1997, "lost": 3}`)}
	x, ok := finalSample(3, end, last, prev, rep)
	if !ok || x.T != 2 || x.PPS != 1000 || x.BPS != 512000 || x.Lost == nil || *x.Lost != 3 || x.LatencyP99Ns != 7000 {
		t.Errorf("no frames since the last sample, loss from the report: %+v %v; want sample 2 again, its rates kept, lost 3", x, ok)
	}
	if *prev.Lost != 1 {
		t.Errorf("the last sample's lost count was changed in place: %d", *prev.Lost)
	}
	// Without a sample before it (the job ended in its first second)
	// the part second is the only one: its rate is the job's.
	if x, ok := finalSample(1, end, job.Snapshot{}, Sample{}, rep); !ok || x.T != 1 || x.PPS != 800 || *x.Lost != 3 {
		t.Errorf("a job of half a second: %+v %v", x, ok)
	}
}

// TestMetricsLiveLateness: /metrics carries a running paced job's
// lateness quantiles, not only a finished one's.
func TestMetricsLiveLateness(t *testing.T) {
	ts := newTest(t, Options{})
	v := ts.create(`{"rate": "2kpps"}`)
	defer ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", v.ID), nil)
	for range 300 {
		fams := scrape(t, ts)
		stats := map[string]float64{}
		if f := fams["wpg_job_lateness_seconds"]; f != nil {
			for _, m := range f.GetMetric() {
				var job, stat string
				for _, l := range m.GetLabel() {
					switch l.GetName() {
					case "job":
						job = l.GetValue()
					case "stat":
						stat = l.GetValue()
					}
				}
				if job == fmt.Sprint(v.ID) {
					stats[stat] = m.GetGauge().GetValue()
				}
			}
		}
		if up, _ := counterOf(fams, "wpg_job_running", v.ID); up == 1 && len(stats) == 3 {
			if stats["max"] < stats["p99"] || stats["p99"] < stats["p50"] {
				t.Errorf("lateness out of order: %v", stats)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no live lateness in /metrics while the job ran")
}

// TestMigrateFromVersion1: a database written by the first schema (no
// started_by, no lateness columns) opens, migrates, and keeps its jobs
// and samples.
func TestMigrateFromVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE schema_version (version INTEGER NOT NULL)`, `INSERT INTO schema_version (version) VALUES (1)`, migrations[0],
		`INSERT INTO jobs (name, spec, status, created_at, started_at, ended_at, frames) VALUES ('old', '{"rate":"1kpps"}', 'done', 1, 1, 2, 1000)`,
		`INSERT INTO samples (job_id, t, frames, bytes, pps, bps) VALUES (1, 1, 1000, 64000, 1000, 512000)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	st, _, err := OpenStore(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v, err := st.Version(t.Context()); err != nil || v != SchemaVersion || v < 2 {
		t.Fatalf("version %d %v", v, err)
	}
	rec, err := st.Get(t.Context(), 1)
	if err != nil || rec == nil || rec.Name != "old" || rec.StartedBy != "" || rec.Frames != 1000 {
		t.Fatalf("the old job: %+v %v", rec, err)
	}
	xs, err := st.Samples(t.Context(), 1)
	if err != nil || len(xs) != 1 || xs[0].PPS != 1000 || xs[0].Lost != nil || xs[0].LatenessP99Ns != 0 {
		t.Fatalf("the old samples: %+v %v", xs, err)
	}
}

// TestBackendLacks: a kernel feature of a backend that the host's probes
// found missing is listed with it, in the API and on the new-job page.
func TestBackendLacks(t *testing.T) {
	probes := sysinfo.NewProbes(
		sysinfo.Probe{Name: "null: a feature this kernel lacks", MinKernel: "9.9", Run: func() (sysinfo.Status, string) { return sysinfo.NotSupported, "" }},
		sysinfo.Probe{Name: "null: one it has", MinKernel: "3.0", Run: func() (sysinfo.Status, string) { return sysinfo.Available, "" }},
	)
	ts := newTest(t, Options{Probes: probes})
	for _, b := range ts.s.Backends() {
		if b.Name == "null" && (len(b.Lacks) != 1 || b.Lacks[0] != "null: a feature this kernel lacks (Linux 9.9)" || !b.Runnable) {
			t.Errorf("null: %+v", b)
		}
	}
	if _, html := ts.page("GET", "/jobs/new", nil, nil); !strings.Contains(html, "This kernel lacks: null: a feature this kernel lacks (Linux 9.9).") {
		t.Error("the new-job page does not say what the kernel lacks")
	}
}

func TestThinSamples(t *testing.T) {
	xs := make([]Sample, 10000)
	for i := range xs {
		xs[i].T = int64(i + 1)
	}
	got := thin(xs)
	if len(got) != MaxChartSamples || got[0].T != 1 || got[len(got)-1].T != 10000 {
		t.Fatalf("thin: %d samples, %d … %d", len(got), got[0].T, got[len(got)-1].T)
	}
	for i := 1; i < len(got); i++ {
		if got[i].T <= got[i-1].T {
			t.Fatalf("not in order at %d: %d after %d", i, got[i].T, got[i-1].T)
		}
	}
	if short := xs[:100]; len(thin(short)) != 100 {
		t.Error("a short job's samples were thinned")
	}
}

// TestFinalSampleStreamRates: the streams' counts lag the run's frames by
// up to engine.StreamsEvery while it runs, so the last part second of a
// job (here 1 ms) finds them up to 50 ms of frames short at the last
// sample; its streams' rates are the part second's frame rate split by
// their shares, not those 50 ms of frames over 1 ms (the job page drew a
// spike of 60 times the job's rate at its end).
func TestFinalSampleStreamRates(t *testing.T) {
	// At 2 s the run has sent 2000 frames, its streams counted 1950 (3:1).
	last := job.Snapshot{Elapsed: 2 * time.Second, Frames: 2000, Bytes: 128000,
		Streams: []job.StreamSnapshot{{Stream: 0, Frames: 1462}, {Stream: 1, Frames: 488}}}
	// It ends 1 ms later: one frame more, the streams complete.
	end := job.Snapshot{Elapsed: 2001 * time.Millisecond, Frames: 2001, Bytes: 128064, Done: true,
		Streams: []job.StreamSnapshot{{Stream: 0, Frames: 1501}, {Stream: 1, Frames: 500}}}
	x, ok := finalSample(3, end, last, Sample{T: 2}, &report.Report{})
	if !ok || len(x.Streams) != 2 {
		t.Fatalf("final sample: %+v %v", x, ok)
	}
	sum := x.Streams[0].PPS + x.Streams[1].PPS
	if d := sum - x.PPS; d > 1e-6*x.PPS || d < -1e-6*x.PPS {
		t.Errorf("the streams' rates add up to %.1f pps, the part second's rate is %.1f pps: %+v", sum, x.PPS, x.Streams)
	}
	if x.Streams[0].Frames != 1501 || x.Streams[1].Frames != 500 {
		t.Errorf("the streams' frames so far: %+v", x.Streams)
	}
	// A whole second: the streams' rates split its rate by their shares.
	mid := sampleOf(2, last, job.Snapshot{Elapsed: time.Second, Frames: 1000, Bytes: 64000,
		Streams: []job.StreamSnapshot{{Stream: 0, Frames: 712}, {Stream: 1, Frames: 238}}})
	if mid.PPS != 1000 || mid.Streams[0].PPS != 750 || mid.Streams[1].PPS != 250 {
		t.Errorf("a whole second of 1000 pps, its streams 3:1: %+v", mid)
	}
}
