package server

import (
	"context"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"
)

// finishedJob stores a finished job with report rep (JSON) and returns
// its ID.
func finishedJob(t *testing.T, ts *testServer, name, rep string, frames uint64) int64 {
	t.Helper()
	now := time.Now().UnixNano()
	rec := &JobRecord{Name: name, Spec: `{"backend":"shm","start_receiver":true}`, Status: StatusRunning, CreatedAt: now, StartedAt: now}
	ctx := context.Background()
	if err := ts.s.store.Insert(ctx, rec); err != nil {
		t.Fatal(err)
	}
	rec.Status, rec.EndedAt, rec.Frames, rec.Report = StatusDone, now+int64(time.Second), frames, []byte(rep)
	if err := ts.s.store.Finish(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if err := ts.s.store.AddSample(ctx, rec.ID, Sample{T: 1, Frames: frames, PPS: float64(frames), LatencyP99Ns: 5000}); err != nil {
		t.Fatal(err)
	}
	return rec.ID
}

// compareCells gets the compare page of jobs a and b and returns it and
// its table's cells, row label to each job's cell (HTML unescaped).
func compareCells(t *testing.T, ts *testServer, a, b int64) (string, map[string][]string) {
	t.Helper()
	code, data := ts.do("GET", fmt.Sprintf("/compare?id=%d&id=%d", a, b), nil)
	if code != 200 {
		t.Fatalf("%d %s", code, data)
	}
	page := string(data)
	cells := map[string][]string{}
	for _, m := range regexp.MustCompile(`<tr><th>([^<]+)</th>(.*?)</tr>`).FindAllStringSubmatch(page, -1) {
		for _, c := range regexp.MustCompile(`<td>(.*?)</td>`).FindAllStringSubmatch(m[2], -1) {
			cells[m[1]] = append(cells[m[1]], html.UnescapeString(c[1]))
		}
	}
	return page, cells
}

// TestCompareDeltasAndReceiver: the compare page shows, beside each
// figure of the jobs after the first, its distance from the first's in
// per cent (better or worse where the row has a better way), and the
// receivers' loss, latency and RFC 3550 jitter.
func TestCompareDeltasAndReceiver(t *testing.T) {
	ts := newTest(t, Options{})
	a := finishedJob(t, ts, "base", `{"schema":"wpg.report/v2","frames":1000,"seconds":1,"pps":1000,"bps":512000,"rate":"1kpps","achieved_ratio":0.99,
		"lateness_p50_ns":1000,"lateness_p99_ns":4000,"lateness_max_ns":9000,"workers":[{"worker":0,"frames":1000}],
		"verification":{"frames":990,"lost":10,"duplicated":0,"corrupted":0,"latency":{"samples":990,"p50_ns":2000,"p99_ns":8000,"max_ns":20000},"jitter_ns":400}}`, 1000)
	b := finishedJob(t, ts, "next", `{"schema":"wpg.report/v2","frames":1100,"seconds":1,"pps":1100,"bps":563200,"rate":"1kpps","achieved_ratio":1.1,
		"lateness_p50_ns":1000,"lateness_p99_ns":6000,"lateness_max_ns":9000,"workers":[{"worker":0,"frames":1100}],
		"verification":{"frames":1095,"lost":5,"duplicated":0,"corrupted":0,"latency":{"samples":1095,"p50_ns":1000,"p99_ns":8800,"max_ns":20000},"jitter_ns":300}}`, 1100)
	page, cells := compareCells(t, ts, a, b)
	for row, want := range map[string][2]string{
		"frames":            {"1,000", `1,100 <span class="delta">+10.0 %</span>`},
		"rate":              {"1 kpps", `1.1 kpps <span class="delta">+10.0 %</span>`},
		"lateness p50":      {"1µs", `1µs <span class="delta">±0 %</span>`},
		"lateness p99":      {"4µs", `6µs <span class="delta worse">+50.0 %</span>`},
		"achieved ratio":    {"0.9900", `1.1000 <span class="delta better">+11.1 %</span>`},
		"received":          {"990", `1,095 <span class="delta">+10.6 %</span>`},
		"lost":              {"10", `5 <span class="delta better">-50.0 %</span>`},
		"loss":              {"1 %", `0.455 % <span class="delta better">-54.5 %</span>`},
		"latency p50":       {"2µs", `1µs <span class="delta better">-50.0 %</span>`},
		"latency p99":       {"8µs", `8.8µs <span class="delta worse">+10.0 %</span>`},
		"jitter (RFC 3550)": {"400ns", `300ns <span class="delta better">-25.0 %</span>`},
	} {
		got := cells[row]
		if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("row %q: %q, want %q", row, got, want)
		}
	}
	if !strings.Contains(page, `<div id="cmp-latency">`) {
		t.Errorf("no receiver latency chart, though the samples carry it")
	}
	// Jobs without a receiver have no receiver rows.
	c := ts.create(`{"count": 100}`)
	ts.wait(c.ID)
	d := ts.create(`{"count": 200}`)
	ts.wait(d.ID)
	_, data := ts.do("GET", fmt.Sprintf("/compare?id=%d&id=%d", c.ID, d.ID), nil)
	if strings.Contains(string(data), "<th>lost</th>") || !strings.Contains(html.UnescapeString(string(data)), `<span class="delta">+100.0 %</span>`) {
		t.Errorf("two null jobs: receiver rows, or no +100 %% for twice the frames:\n%s", data)
	}
}

// TestCompareDeltasNearZero: where the first job's figure is 0, or the
// other is more than 11 times it, the compare table shows the difference
// itself in the row's unit, not a per cent that says nothing ("+11865885
// %" against a job that sent one frame), and nothing where both are 0.
func TestCompareDeltasNearZero(t *testing.T) {
	ts := newTest(t, Options{})
	a := finishedJob(t, ts, "base", `{"schema":"wpg.report/v2","frames":1,"seconds":1,"pps":1,"bps":512,"rate":"1kpps","achieved_ratio":0.001,
		"lateness_p50_ns":1000,"lateness_p99_ns":4000,"lateness_max_ns":9000,"workers":[{"worker":0,"frames":1}],
		"verification":{"frames":990,"lost":0,"duplicated":0,"corrupted":0,"latency":{"samples":990,"p50_ns":2000,"p99_ns":8000,"max_ns":20000},"jitter_ns":400}}`, 1)
	b := finishedJob(t, ts, "next", `{"schema":"wpg.report/v2","frames":11865886,"seconds":1,"pps":11865886,"bps":6075333632,"rate":"1kpps","achieved_ratio":0.99,
		"lateness_p50_ns":1000,"lateness_p99_ns":6000,"lateness_max_ns":9000,"workers":[{"worker":0,"frames":11865886}],
		"verification":{"frames":1095,"lost":5,"duplicated":0,"corrupted":0,"latency":{"samples":1095,"p50_ns":1000,"p99_ns":8800,"max_ns":300000000},"jitter_ns":300}}`, 11865886)
	page, cells := compareCells(t, ts, a, b)
	for row, want := range map[string]string{
		"frames":         `11,865,886 <span class="delta">+11,865,885</span>`,
		"rate":           `11.9 Mpps <span class="delta">+11.9 Mpps</span>`,
		"achieved ratio": `0.9900 <span class="delta better">+0.9890</span>`,
		"lateness p99":   `6µs <span class="delta worse">+50.0 %</span>`, // an ordinary distance stays in per cent
		"lost":           `5 <span class="delta worse">+5</span>`,
		"loss":           `0.455 % <span class="delta worse">+0.455 pp</span>`,
		"duplicated":     `0`,
		"latency max":    `300ms <span class="delta worse">+299.98ms</span>`,
	} {
		if got := cells[row]; len(got) != 2 || got[1] != want {
			t.Errorf("row %q: %q, want %q second", row, got, want)
		}
	}
	if m := regexp.MustCompile(`[+-]\d{5,}(\.\d)? %`).FindString(page); m != "" {
		t.Errorf("a per cent of five digits or more: %s", m)
	}
}
