package server

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/examples"
	"github.com/wpg-dev/wpg/report"
)

// TestReportHTML: a finished job's report is served as the page of wpg
// report html (its per-stream table, nothing to fetch), sandboxed, and
// its page links to it; a running job's is a 409 and a job without a
// report a 404, as the JSON report's.
func TestReportHTML(t *testing.T) {
	ts := newTest(t, Options{})
	text, err := examples.FS.ReadFile("mixed.wpg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"name": "handed over", "template_text": string(text), "count": 6000})
	v := ts.create(string(body))
	ts.wait(v.ID)
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/v1/jobs/%d/report.html", ts.hs.URL, v.ID), nil)
	resp, err := ts.hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("%d %s\n%.300s", resp.StatusCode, resp.Header.Get("Content-Type"), page)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "sandbox;") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	for _, want := range []string{`id="streams"`, "udp4-imix", "arp"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report page has no %q", want)
		}
	}
	if strings.Contains(string(page), "http://") || strings.Contains(string(page), "https://") || strings.Contains(string(page), "<script") {
		t.Errorf("the report page refers to something to fetch or run")
	}
	if _, html := ts.page("GET", fmt.Sprintf("/jobs/%d", v.ID), nil, nil); !strings.Contains(html, fmt.Sprintf(`<a class="button" id="report-html" href="/api/v1/jobs/%d/report.html">Report HTML</a>`, v.ID)) {
		t.Errorf("the job page does not link to its HTML report")
	}
	// A running job has none yet; its page has no link.
	run := ts.create(`{"rate": "1kpps"}`)
	defer ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", run.ID), nil)
	if code, data := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d/report.html", run.ID), nil); code != http.StatusConflict || !strings.Contains(string(data), "still running") {
		t.Errorf("a running job: %d %s", code, data)
	}
	if _, html := ts.page("GET", fmt.Sprintf("/jobs/%d", run.ID), nil, nil); strings.Contains(html, `id="report-html"`) {
		t.Errorf("a running job's page links to a report")
	}
	if code, _ := ts.do("GET", "/api/v1/jobs/99999/report.html", nil); code != http.StatusNotFound {
		t.Errorf("no such job: %d", code)
	}
}

// TestReportHTMLIntervals: a job's HTML report draws the per-second
// samples the server stored for it as the report's intervals (the rate
// over time, the lateness p99 of each second), as wpg report html draws a
// CLI report's --interval; the page's JSON carries them as intervals[],
// whose frames add up to the report's.
func TestReportHTMLIntervals(t *testing.T) {
	ts := newTest(t, Options{})
	v := ts.create(`{"name": "seconds", "rate": "2kpps", "duration": 2500000000}`)
	ts.wait(v.ID)
	code, page := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d/report.html", v.ID), nil)
	if code != http.StatusOK {
		t.Fatalf("%d %.300s", code, page)
	}
	for _, want := range []string{"frame rate over time", "lateness p99 per interval", "&#34;intervals&#34;: ["} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report page has no %q", want)
		}
	}
	code, data := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d/samples", v.ID), nil)
	var samples struct{ Samples []Sample }
	if err := json.Unmarshal(data, &samples); err != nil || code != http.StatusOK || len(samples.Samples) < 2 {
		t.Fatalf("samples: %d %v %s", code, err, data)
	}
	// The page's JSON, unescaped from its <pre>.
	raw := string(page)
	raw = raw[strings.Index(raw, "{\n"):]
	raw = html.UnescapeString(raw[:strings.Index(raw, "</pre>")])
	var rep struct {
		Frames    uint64
		Intervals []report.Interval
	}
	if err := json.Unmarshal([]byte(raw), &rep); err != nil {
		t.Fatalf("the page's JSON: %v\n%.500s", err, raw)
	}
	var sum uint64
	for _, in := range rep.Intervals {
		sum += in.Frames
	}
	if len(rep.Intervals) != len(samples.Samples) || sum != rep.Frames {
		t.Fatalf("%d intervals of %d frames, want the %d samples' and the report's %d frames", len(rep.Intervals), sum, len(samples.Samples), rep.Frames)
	}
	if first := rep.Intervals[0]; first.Start != 0 || first.End != 1 || first.Frames != samples.Samples[0].Frames || first.PPS != samples.Samples[0].PPS {
		t.Errorf("the first interval %+v, the first sample %+v", first, samples.Samples[0])
	}
}
