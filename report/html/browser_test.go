//go:build linux

package html_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/wpg-dev/wpg/internal/testbed/chromium"
)

// TestChromiumRendersThePage (issue #29): Debian's chromium opens each
// page written from a real report, offline, and shows its per-stream
// table and its charts; the page loaded nothing besides itself.
func TestChromiumRendersThePage(t *testing.T) {
	ctx := chromium.Tab(t, 1200, 900)
	dir := t.TempDir()
	for _, c := range []struct {
		file     string
		rows     int
		firstRow string
	}{{"send.json", 6, "udp4-imix"}, {"merged.json", 6, "udp4-imix"}, {"recv.json", 1, ""}, {"matrix.json", 4, "null"}, {"ndr.json", 2, "64 B"}} {
		page := filepath.Join(dir, c.file+".html")
		if err := os.WriteFile(page, []byte(render(t, c.file)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitVisible(chromedp.ID("streams"))); err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		eval := func(js string) any {
			v, err := chromedp.Run(ctx, chromedp.Evaluate[any](js))
			if err != nil {
				t.Fatalf("%s: %s: %v", c.file, js, err)
			}
			return v
		}
		if n := eval(`document.querySelectorAll("#streams tbody tr").length`); n != float64(c.rows) {
			t.Errorf("%s: chromium shows %v rows in the per-stream table, want %d", c.file, n, c.rows)
		}
		if c.firstRow != "" {
			if text := eval(`document.querySelector("#streams tbody tr").innerText`).(string); !strings.Contains(text, c.firstRow) {
				t.Errorf("%s: the first row reads %q, want %q in it", c.file, text, c.firstRow)
			}
		}
		if w := eval(`Math.min(...[...document.querySelectorAll("svg.chart")].map(s => s.getBoundingClientRect().width))`); !(w.(float64) > 300) {
			t.Errorf("%s: a chart %v pixels wide", c.file, w)
		}
		if n := eval(`performance.getEntriesByType("resource").length`); n != 0.0 {
			t.Errorf("%s: the page loaded %v resources", c.file, n)
		}
	}
}

// TestPageFitsAPhone: every page fits a 390 px wide phone without
// scrolling sideways (a wide table scrolls in place), as wpg serve's
// pages do; the per-stream table of a receiver's report made the whole
// page scroll.
func TestPageFitsAPhone(t *testing.T) {
	ctx := chromium.Tab(t, 1200, 900)
	dir := t.TempDir()
	for _, file := range []string{"send.json", "merged.json", "recv.json", "matrix.json", "ndr.json"} {
		page := filepath.Join(dir, file+".html")
		if err := os.WriteFile(page, []byte(render(t, file)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate("file://"+page), chromedp.WaitVisible(chromedp.ID("streams"))); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		v, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[document.documentElement.scrollWidth, document.documentElement.clientWidth]`))
		if err != nil {
			t.Fatal(err)
		}
		if v[0] > v[1] {
			t.Errorf("%s: the page is %v px wide in a %v px window: it scrolls sideways", file, v[0], v[1])
		}
	}
}
