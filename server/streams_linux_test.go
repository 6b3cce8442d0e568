package server

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/examples"
	"github.com/wpg-dev/wpg/job"
)

// TestStreamsTargetAndProgress: a template job's event stream carries
// each stream's frames, the target rate and the progress towards its
// count (with the time left); its samples carry each stream's frames and
// rate, which add up to the job's at the end; its page has the table of
// streams and the progress bar.
func TestStreamsTargetAndProgress(t *testing.T) {
	ts := newTest(t, Options{})
	text, err := examples.FS.ReadFile("mixed.wpg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"template_text": string(text), "rate": "20kpps", "count": 40000})
	v := ts.create(string(body))
	_, page := ts.page("GET", fmt.Sprintf("/jobs/%d", v.ID), nil, nil)
	if !strings.Contains(page, `<progress id="job-progress" max="100"`) || !strings.Contains(page, `% of the count`) {
		t.Errorf("the running job's page has no progress bar")
	}
	if !strings.Contains(page, `<section id="streams-section">`) || !strings.Contains(page, `"streams":["udp4-imix","tcp6-syn","vlan-udp","qinq-udp","ping4","arp"]`) ||
		!strings.Contains(page, `"target_pps":20000`) {
		t.Errorf("the running job's page lacks its streams or target:\n%s", page)
	}
	resp, err := ts.hs.Client().Get(fmt.Sprintf("%s/api/v1/jobs/%d/events", ts.hs.URL, v.ID))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var running []SnapshotView
	var last SnapshotView
	for ev := range readEvents(t, resp.Body) {
		if ev.name != "snapshot" {
			continue
		}
		var s SnapshotView
		if err := json.Unmarshal(ev.data, &s); err != nil {
			t.Fatal(err)
		}
		last = s
		if !s.Done && s.Frames > 0 {
			running = append(running, s)
		}
	}
	if len(running) < 3 {
		t.Fatalf("%d running snapshots", len(running))
	}
	a, b := running[0], running[len(running)-1]
	for _, s := range []SnapshotView{a, b} {
		if s.TargetPPS != 20000 || len(s.Streams) != 6 || s.Streams[0].Name != "udp4-imix" || s.Progress == nil || s.Progress.By != "count" || s.Progress.RemainingSeconds == nil {
			t.Fatalf("snapshot %+v", s)
		}
	}
	if !(b.Progress.Fraction > a.Progress.Fraction) || !(*b.Progress.RemainingSeconds < *a.Progress.RemainingSeconds) || b.Streams[0].Frames <= a.Streams[0].Frames {
		t.Errorf("progress %+v then %+v; stream 0 %d then %d frames", *a.Progress, *b.Progress, a.Streams[0].Frames, b.Streams[0].Frames)
	}
	// 40,000 frames at 20 kpps: about 2 s in all; what is left is what
	// the rest takes at the target, not a timing of this machine.
	if want := float64(40000-a.Frames) / 20000; *a.Progress.RemainingSeconds != want {
		t.Errorf("remaining %v s at %d frames, want %v", *a.Progress.RemainingSeconds, a.Frames, want)
	}
	if !last.Done || last.Progress.Fraction != 1 || *last.Progress.RemainingSeconds != 0 {
		t.Errorf("the last snapshot: %+v", last)
	}
	var sum uint64
	for _, st := range last.Streams {
		sum += st.Frames
	}
	if sum != 40000 {
		t.Errorf("the streams of the last snapshot sum to %d", sum)
	}
	ts.wait(v.ID)
	xs, err := ts.s.store.Samples(t.Context(), v.ID)
	if err != nil || len(xs) < 2 {
		t.Fatalf("samples %v %v", xs, err)
	}
	for _, x := range xs {
		if len(x.Streams) != 6 || x.Streams[0].PPS <= 0 {
			t.Errorf("sample %d: streams %+v", x.T, x.Streams)
		}
	}
	end := xs[len(xs)-1]
	sum = 0
	for _, st := range end.Streams {
		sum += st.Frames
	}
	if sum != end.Frames || end.Frames != 40000 {
		t.Errorf("the last sample's streams sum to %d of %d frames", sum, end.Frames)
	}
	// The finished page: the streams from the report, the target.
	_, page = ts.page("GET", fmt.Sprintf("/jobs/%d", v.ID), nil, nil)
	if strings.Contains(page, `id="job-progress"`) || !strings.Contains(page, `<td class="name">arp</td>`) || !strings.Contains(page, `"target_pps":20000`) ||
		!regexp.MustCompile(`<td class="num opt">[0-9.]+ [kMG]?B</td>`).MatchString(page) || !regexp.MustCompile(`<td class="num opt">[0-9.]+ [kMG]?bit/s</td>`).MatchString(page) {
		t.Errorf("the finished job's page:\n%s", page)
	}
}

// TestProgressOf: a count goes by the frames at the target rate (flat
// out: at the mean rate), a duration by the time, both by whichever is
// further and sooner; a job that runs until stopped, or a segment of one,
// has none.
func TestProgressOf(t *testing.T) {
	spec := func(count uint64, d time.Duration, seg string) job.Spec {
		s := job.NewSpec()
		s.Count, s.Duration, s.Segment = count, d, seg
		return s
	}
	snap := job.Snapshot{Frames: 2500, Elapsed: 2 * time.Second, PPS: 1250}
	paced := snap
	paced.TargetPPS = 1000
	for _, tc := range []struct {
		name     string
		spec     job.Spec
		snap     job.Snapshot
		fraction float64
		by       string
		left     float64
	}{
		{"count, paced", spec(10000, 0, ""), paced, 0.25, "count", 7.5},
		{"count, flat out", spec(10000, 0, ""), snap, 0.25, "count", 6},
		{"duration", spec(0, 10*time.Second, ""), snap, 0.2, "duration", 8},
		{"count further", spec(5000, 10*time.Second, ""), snap, 0.5, "count", 2},
		{"duration sooner", spec(100000, 4*time.Second, ""), snap, 0.5, "duration", 2},
		{"done", spec(5000, 0, ""), job.Snapshot{Frames: 4000, Done: true}, 1, "count", 0},
	} {
		p := progressOf(tc.spec, tc.snap)
		if p == nil || p.Fraction != tc.fraction || p.By != tc.by || p.RemainingSeconds == nil || *p.RemainingSeconds != tc.left {
			t.Errorf("%s: %+v, want %v of the %s, %v s left", tc.name, p, tc.fraction, tc.by, tc.left)
		}
	}
	if p := progressOf(spec(0, 0, ""), snap); p != nil {
		t.Errorf("until stopped: %+v", p)
	}
	if p := progressOf(spec(1000, 0, "0/2"), snap); p != nil {
		t.Errorf("a segment: %+v", p)
	}
	if p := progressOf(spec(1000, 0, ""), job.Snapshot{}); p == nil || p.RemainingSeconds != nil {
		t.Errorf("no rate yet: %+v", p)
	}
}

// TestRunningJobProgress: a running job with a duration says how far it
// has come in the API's view of it and on the jobs page.
func TestRunningJobProgress(t *testing.T) {
	ts := newTest(t, Options{})
	v := ts.create(`{"rate": "1kpps", "duration": 60000000000}`)
	defer ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", v.ID), nil)
	var got JobView
	for deadline := time.Now().Add(10 * time.Second); got.Progress == nil || got.Progress.Fraction == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no progress: %+v", got)
		}
		_, data := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d", v.ID), nil)
		got = JobView{}
		json.Unmarshal(data, &got)
	}
	if got.Progress.By != "duration" || got.Progress.RemainingSeconds == nil || *got.Progress.RemainingSeconds > 60 {
		t.Errorf("progress %+v", *got.Progress)
	}
	if _, html := ts.page("GET", "/ui/running", nil, nil); !strings.Contains(html, `<small class="progress">`) || !strings.Contains(html, "left</small>") {
		t.Errorf("the running jobs' rows do not say how far they have come:\n%s", html)
	}
}
