package html_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/report/html"
)

// render renders the report in testdata/name.
func render(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := html.Render(&out, b); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out.String()
}

// rowsOf counts the body rows of the table with id in page.
func rowsOf(page, id string) int {
	i := strings.Index(page, `<table id="`+id+`">`)
	if i < 0 {
		return -1
	}
	rest := page[i:]
	rest = rest[:strings.Index(rest, "</table>")]
	body := rest[strings.Index(rest, "<tbody>"):]
	return strings.Count(body, "<tr>")
}

// TestRenderEveryReport (issue #29): each report wpg writes (a send
// report with intervals, a merge of two segments, a receiver's, a merge
// of receivers, the bench matrix, an ndr search; real ones, in testdata)
// renders as one page with its summary, a per-stream table of the right
// rows, SVG charts and, where the report has one, the environment; the
// page fetches nothing and names no URL.
func TestRenderEveryReport(t *testing.T) {
	for _, c := range []struct {
		file    string
		title   string
		streams int
		env     bool
		tables  []string
	}{
		{"send.json", "wpg send examples/mixed.wpg.yaml", 6, true, []string{"workers"}},
		{"merged.json", "wpg send examples/mixed.wpg.yaml", 6, true, []string{"workers", "inputs"}},
		{"recv.json", "wpg recv", 1, true, nil},
		{"merged-recv.json", "wpg recv (2 receivers merged)", 1, true, []string{"inputs"}},
		{"matrix.json", "wpg bench: the matrix", 4, true, []string{"matrix-1"}},
		{"ndr.json", "wpg ndr: RFC 2544 throughput", 2, false, nil},
	} {
		page := render(t, c.file)
		if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.Contains(page, "<h1>"+c.title+"</h1>") {
			t.Errorf("%s: no page titled %q:\n%.300s", c.file, c.title, page)
		}
		if n := rowsOf(page, "streams"); n != c.streams {
			t.Errorf("%s: the per-stream table has %d rows, want %d", c.file, n, c.streams)
		}
		for _, id := range c.tables {
			if rowsOf(page, id) < 1 {
				t.Errorf("%s: no table %s", c.file, id)
			}
		}
		if strings.Count(page, `<svg class="chart"`) < 1 || !strings.Contains(page, `id="summary"`) {
			t.Errorf("%s: no chart or no summary", c.file)
		}
		if strings.Contains(page, `id="environment"`) != c.env {
			t.Errorf("%s: environment shown: %v, want %v", c.file, !c.env, c.env)
		}
		selfContained(t, c.file, page)
	}
}

// external finds what a page could fetch or link to: a URL of any
// scheme, a protocol-relative one, a src or href, an @import or url().
var external = regexp.MustCompile(`(?i)[a-z][a-z0-9+.-]*://|\bsrc=|\bhref=|@import|url\(|["'(]//`)

// selfContained fails the test when page names anything outside itself.
func selfContained(t *testing.T, name, page string) {
	t.Helper()
	if m := external.FindString(page); m != "" || strings.Contains(strings.ToLower(page), "http") {
		t.Errorf("%s: the page refers outside itself (%q, or http)", name, m)
	}
}

// TestURLsInTheReportAreNotLinks: a report's own text may hold a URL (a
// command line); the page shows it, and still holds none.
func TestURLsInTheReportAreNotLinks(t *testing.T) {
	b, err := os.ReadFile("testdata/send.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc["notes"] = []string{"see https://example.invalid/x and HTTP://EXAMPLE.invalid"}
	b, _ = json.Marshal(doc)
	var out bytes.Buffer
	if err := html.Render(&out, b); err != nil {
		t.Fatal(err)
	}
	if m := external.FindString(out.String()); m != "" {
		t.Errorf("the page holds %q", m)
	}
	if !strings.Contains(out.String(), "https&#58;//example.invalid/x") {
		t.Error("the note's text is not shown")
	}
}

// TestRenderRefusals: what is not a wpg report is refused with what it is.
func TestRenderRefusals(t *testing.T) {
	for doc, want := range map[string]string{
		"":                          "empty",
		"[1]":                       "not a wpg JSON report",
		`{"frames": 3}`:             `no "schema"`,
		`{"schema": "wpg.other/1"}`: `schema "wpg.other/1"`,
		`{"schema": "wpg.report/v2", "frames": "x"}`: "wpg.report/v2 report",
	} {
		err := html.Render(&bytes.Buffer{}, []byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
}

// TestByteTotalsScale: a run's byte total reads in the largest binary
// unit it reaches, to one decimal, as the rest of wpg writes sizes
// (units.FormatSizeApprox): it read "12000 KiB" and "5277888 B", the
// exact units.FormatSize of a size one types.
func TestByteTotalsScale(t *testing.T) {
	for file, want := range map[string]string{
		"send.json":        "<dt>bytes</dt><dd>11.7 MiB</dd>",              // 12,288,000 bytes
		"merged.json":      "<dt>bytes</dt><dd>11.7 MiB</dd>",              // the same, in two segments
		"recv.json":        "<dt>frames</dt><dd>4\u202f998 (5.0 MiB)</dd>", // 5,277,888 bytes
		"merged-recv.json": "<dt>frames</dt><dd>9\u202f996 (10.1 MiB)</dd>",
	} {
		if page := render(t, file); !strings.Contains(page, want) {
			i := strings.Index(page, "<dt>frames")
			t.Errorf("%s: no %q in the summary:\n%.400s", file, want, page[max(i, 0):])
		}
	}
}

// TestDurationsReadOneWay: a duration reads the same way everywhere on
// the page, as wpg's text reports write it (Go's form: 20.531µs, no
// space): a latency or lateness bar's label and tooltip give the value
// the summary gives (they read "16.1 µs" beside the table's 16.079µs),
// and the charts' ticks, rounded to 3 significant digits, are spelt
// the same way (100µs, 2ms).
func TestDurationsReadOneWay(t *testing.T) {
	spaced := regexp.MustCompile(`[0-9] (ns|µs|ms)\b`)
	title := regexp.MustCompile(`<title>(min|p50|p99|p99\.9|max): ([^<]*)</title>`)
	for file, summary := range map[string]string{"send.json": "lateness", "recv.json": "latency"} {
		page := render(t, file)
		if m := spaced.FindAllString(page, 5); m != nil {
			t.Errorf("%s: durations written with a space: %q", file, m)
		}
		i := strings.Index(page, "<dt>"+summary+"</dt><dd>")
		if i < 0 {
			t.Fatalf("%s: no %s in the summary", file, summary)
		}
		line := page[i : i+strings.Index(page[i:], "</dd>")]
		bars := title.FindAllStringSubmatch(page, -1)
		if len(bars) < 3 {
			t.Fatalf("%s: %d latency bars", file, len(bars))
		}
		for _, b := range bars {
			if !strings.Contains(line, b[1]+" "+b[2]) {
				t.Errorf("%s: the bar %s reads %q; the summary %q", file, b[1], b[2], line)
			}
			if !strings.Contains(page, `class="value"`) || !strings.Contains(page, ">"+b[2]+"</text>") {
				t.Errorf("%s: no bar label %q beside the bar %s", file, b[2], b[1])
			}
		}
	}
}
