//go:build linux

package server

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	_ "github.com/wpg-dev/wpg/backend/all" // the new-job and host pages show every backend and its probes
	"github.com/wpg-dev/wpg/internal/testbed/chromium"
	"github.com/wpg-dev/wpg/job"
)

var screenshots = flag.String("screenshots", "", "directory the browser test writes a PNG of each page into (serve-*.png; docs/img)")

// browser starts headless Chromium (Debian's /usr/bin/chromium) with a
// fresh profile and returns a context for one tab.
func browser(t *testing.T) context.Context {
	t.Helper()
	return chromium.Tab(t, 1280, 900)
}

// shot saves a PNG of the whole page as DIR/serve-NAME.png when the test
// runs with -screenshots DIR.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if *screenshots == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(*screenshots, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*screenshots, "serve-"+name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// eval runs a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// until polls a JavaScript condition for up to limit.
func until(t *testing.T, ctx context.Context, what, js string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("main")))
			t.Fatalf("%s: not within %s (%v)\n%s", what, limit, err, html)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// clear empties an input or textarea without events: the keys typed
// next fire them.
func clear(id string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](fmt.Sprintf(`(document.getElementById(%q).value = "", true)`, id))(ctx, t)
		return err
	})
}

// uiServer is a real server on loopback that the test can restart on the
// same database.
type uiServer struct {
	t   *testing.T
	db  string
	s   *Server
	hs  *httptest.Server
	url string
}

func (u *uiServer) start() {
	s, err := New(context.Background(), Options{DB: u.db, Token: testToken})
	if err != nil {
		u.t.Fatal(err)
	}
	u.s, u.hs = s, httptest.NewServer(s.Handler())
	u.url = u.hs.URL
}

func (u *uiServer) stop() {
	u.s.stopJobs() // the event streams end
	u.hs.CloseClientConnections()
	u.hs.Close()
	if err := u.s.Close(); err != nil {
		u.t.Error(err)
	}
}

// TestBrowser drives the web UI in headless Chromium as a person would:
// log in, type a template and watch the preview follow, start a paced
// null run and watch its chart grow, stop it, find it in the history,
// restart the server and find it again, and compare two runs.
func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a browser for about 20 s: not under -short")
	}
	ctx := browser(t)
	u := &uiServer{t: t, db: filepath.Join(t.TempDir(), "jobs.db")}
	u.start()
	defer func() { u.stop() }()
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	// A page without a session goes to the login form.
	do("open the new-job page", chromedp.Navigate(u.url+"/jobs/new"), chromedp.WaitVisible(chromedp.ID("token")))
	shot(t, ctx, "login")
	do("log in", chromedp.SendKeys(chromedp.ID("token"), testToken), chromedp.Click(chromedp.ID("login")),
		chromedp.WaitVisible(chromedp.ID("template_text")))
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.HasSuffix(loc, "/jobs/new") {
		t.Fatalf("after login: %s", loc)
	}
	until(t, ctx, "the default template's preview", `document.querySelectorAll("#preview .frame").length == 4`, 10*time.Second)

	// Pick an example: the editor and the preview follow.
	eval[bool](t, ctx, `(() => { const s = document.getElementById("example");
		s.value = [...s.options].find((o) => o.text == "mixed.wpg.yaml").value; s.dispatchEvent(new Event("change")); return true; })()`)
	until(t, ctx, "the example's preview", `document.querySelector("#template_text").value.includes("udp4-imix") &&
		document.querySelector("#preview").textContent.includes("udp4-imix")`, 10*time.Second)

	// Type a template: the preview follows.
	tmpl := "streams:\n  - name: typed-in-the-browser\n    size: 128\n    ipv4: {src: 198.18.0.7, dst: 198.19.0.7}\n    udp: {src: 4000, dst: 9}\n" +
		"  - name: second-stream\n    share: 3\n    size: 64\n    ipv4: {src: 198.18.0.8, dst: 198.19.0.8}\n    udp: {src: 4001, dst: 9}\n"
	do("type a template", clear("template_text"), chromedp.SendKeys(chromedp.ID("template_text"), tmpl))
	until(t, ctx, "the preview of the typed template",
		`document.querySelector("#preview").textContent.includes("typed-in-the-browser") && document.querySelector("#preview").textContent.includes("128 bytes")`, 10*time.Second)
	// A mistake shows where it is.
	do("break it", chromedp.SendKeys(chromedp.ID("template_text"), "    bogus: 1\n"))
	until(t, ctx, "the template error", `document.querySelector("#preview .errors") != null && document.querySelector("#preview").textContent.includes("line 11")`, 10*time.Second)
	do("mend it", clear("template_text"), chromedp.SendKeys(chromedp.ID("template_text"), tmpl))
	until(t, ctx, "the mended preview", `document.querySelector("#preview .errors") == null && document.querySelectorAll("#preview .frame").length == 4`, 10*time.Second)

	// Start a paced null run that goes on until it is stopped.
	do("fill the job", chromedp.SendKeys(chromedp.ID("name"), "browser run"), chromedp.SendKeys(chromedp.ID("started_by"), "chromium"),
		clear("rate"), chromedp.SendKeys(chromedp.ID("rate"), "2kpps"), clear("duration"))
	shot(t, ctx, "new")
	do("start it", chromedp.Click(chromedp.ID("start")), chromedp.WaitVisible(chromedp.ID("chart-pps")))
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	var first int64
	if _, err := fmt.Sscanf(loc[strings.LastIndex(loc, "/jobs/"):], "/jobs/%d", &first); err != nil {
		t.Fatalf("the job page is %s", loc)
	}
	// Its chart's data grows over several seconds.
	points := `((window.wpg && wpg.charts["chart-pps"]) ? wpg.charts["chart-pps"].data[0].length : 0)`
	until(t, ctx, "the first chart points", points+` >= 2`, 10*time.Second)
	n0 := eval[int](t, ctx, points)
	until(t, ctx, "the chart growing", fmt.Sprintf("%s >= %d", points, n0+12), 20*time.Second)
	until(t, ctx, "frames counted", `document.querySelector("#job-frames").textContent != "0"`, 5*time.Second)
	if !eval[bool](t, ctx, `document.querySelectorAll("#workers tbody tr").length == 1`) {
		t.Error("the per-worker table has no row")
	}
	// The rate chart has the target's line: 2 kpps at every point.
	if !eval[bool](t, ctx, `(() => { const u = wpg.charts["chart-pps"]; return u.series.length == 3 && u.series[2].label == "target" &&
		u.data[2].length == u.data[0].length && u.data[2].every((v) => v == 2000); })()`) {
		t.Error("the rate chart has no target line at 2 kpps")
	}
	// Each stream has its line, growing live, and a row in the table.
	streams := `wpg.charts["chart-streams"]`
	until(t, ctx, "the streams' lines", fmt.Sprintf(`%s && %s.series.length == 3 && %s.series[1].label == "typed-in-the-browser" &&
		%s.series[2].label == "second-stream" && %s.data[2].filter((v) => v > 0).length >= 3`, streams, streams, streams, streams, streams), 10*time.Second)
	if !eval[bool](t, ctx, `document.querySelectorAll("#streams tbody tr").length == 2 && document.querySelector("#streams tbody").textContent.includes("second-stream")`) {
		t.Error("the table of streams does not list both")
	}
	// The legend works: a click on a stream's name hides its line, a
	// second shows it again.
	shot(t, ctx, "job-running")
	legend := `#chart-streams .u-legend tr.u-series:nth-child(3) th`
	do("hide a stream", chromedp.Click(chromedp.CSS(legend)))
	if !eval[bool](t, ctx, streams+`.series[2].show === false && `+streams+`.series[1].show === true`) {
		t.Error("a click on the legend did not hide the stream's line")
	}
	do("show it again", chromedp.Click(chromedp.CSS(legend)))
	if !eval[bool](t, ctx, streams+`.series[2].show === true`) {
		t.Error("a second click on the legend did not show the stream's line again")
	}

	// Stop it: the page shows the final report.
	do("stop it", chromedp.Click(chromedp.ID("stop")), chromedp.WaitVisible(chromedp.ID("report")))
	if !eval[bool](t, ctx, `document.querySelector("#job-status").textContent.includes("stopped")`) {
		t.Error("the stopped job does not say stopped")
	}
	shot(t, ctx, "job")
	// Its HTML report opens from the page, with its table of streams.
	do("open the HTML report", chromedp.Click(chromedp.ID("report-html")), chromedp.WaitVisible(chromedp.ID("streams")))
	if !eval[bool](t, ctx, `document.querySelector("#streams").textContent.includes("second-stream")`) {
		t.Error("the HTML report's table of streams does not list the streams")
	}
	shot(t, ctx, "report")
	do("back to the job", chromedp.Navigate(loc), chromedp.WaitVisible(chromedp.ID("report")))

	// Find it in the history, before and after a restart on the same database.
	row := fmt.Sprintf(`document.querySelector('#finished a[href="/jobs/%d"]') != null`, first)
	do("open the jobs page", chromedp.Navigate(u.url+"/"), chromedp.WaitVisible(chromedp.ID("finished")))
	if !eval[bool](t, ctx, row) {
		t.Fatal("the stopped job is not in the history")
	}
	u.stop()
	u.start()
	// A restart ends the sessions: the page asks for the token again.
	do("open the jobs page after the restart", chromedp.Navigate(u.url+"/"), chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), testToken), chromedp.Click(chromedp.ID("login")), chromedp.WaitVisible(chromedp.ID("finished")))
	if !eval[bool](t, ctx, row) {
		t.Fatal("the stopped job is not in the history after a restart")
	}

	// A second, short run, then compare the two.
	do("second job", chromedp.Navigate(u.url+"/jobs/new"), chromedp.WaitVisible(chromedp.ID("rate")),
		chromedp.SendKeys(chromedp.ID("name"), "second run"), clear("rate"), chromedp.SendKeys(chromedp.ID("rate"), "1kpps"),
		clear("duration"), chromedp.SendKeys(chromedp.ID("duration"), "3s"), chromedp.Click(chromedp.ID("start")),
		chromedp.WaitVisible(chromedp.ID("chart-pps")))
	// A job of 3 s shows how far it has come and the time left, until its
	// report replaces the page.
	until(t, ctx, "the progress", `document.querySelector("#report") != null || (window.wpg && wpg.progress > 0 &&
		document.querySelector("#job-progress").value > 0 && /% of the duration · \d+s left/.test(document.querySelector("#job-progress-text").textContent))`, 10*time.Second)
	if eval[bool](t, ctx, `document.querySelector("#report") != null`) {
		t.Log("the second run ended before its progress was seen (a loaded machine)")
	}
	until(t, ctx, "the second run's report", `document.querySelector("#report") != null`, 20*time.Second)
	do("jobs page", chromedp.Navigate(u.url+"/"), chromedp.WaitVisible(chromedp.ID("finished")))
	shot(t, ctx, "jobs")
	do("tick both", chromedp.Click(chromedp.CSS(`#finished input[type=checkbox]`)),
		chromedp.Click(chromedp.CSS(`#finished tbody tr:nth-child(2) input[type=checkbox]`)),
		chromedp.Click(chromedp.ID("compare")), chromedp.WaitVisible(chromedp.ID("compare-table")))
	if n := eval[int](t, ctx, `document.querySelectorAll("#compare-table thead th").length`); n != 3 {
		t.Errorf("the compare table has %d header cells, want 3", n)
	}
	// app.js is deferred: the chart comes once it has run.
	until(t, ctx, "the compare chart with x and two jobs", `window.wpg && wpg.charts["chart-cmp-pps"] && wpg.charts["chart-cmp-pps"].series.length == 3`, 10*time.Second)
	// The second job's figures say how far they are from the first's.
	if !eval[bool](t, ctx, `(() => { const r = [...document.querySelectorAll("#compare-table tbody tr")].find((tr) => tr.querySelector("th").textContent == "frames");
		return !!r && r.querySelectorAll("td")[0].querySelector(".delta") == null && /^[+-]\d+(\.\d+)? %$/.test(r.querySelectorAll("td")[1].querySelector(".delta").textContent); })()`) {
		t.Error("the compare table has no per-cent delta on the second job's frames")
	}
	shot(t, ctx, "compare")

	do("host page", chromedp.Navigate(u.url+"/host"), chromedp.WaitVisible(chromedp.ID("sysinfo")))
	shot(t, ctx, "host")

	// Every page usable on a phone and on a laptop.
	spec := job.NewSpec()
	spec.Rate = "500pps"
	e, err := u.s.create(context.Background(), Creator{Name: "running for the widths"}, spec)
	if err != nil {
		t.Fatal(err)
	}
	running := e.id
	pages := []struct{ name, path, wait string }{
		{"jobs", "/", "finished"},
		{"new", "/jobs/new", "preview"},
		{"running job", fmt.Sprintf("/jobs/%d", running), "chart-pps"},
		{"finished job", fmt.Sprintf("/jobs/%d", first), "report"},
		{"compare", fmt.Sprintf("/compare?id=%d&id=%d", first, first+1), "compare-table"},
		{"host", "/host", "sysinfo"},
		{"run again", fmt.Sprintf("/jobs/new?from=%d", first), "preview"},
		{"no such job", "/jobs/999999", ""},
		{"no such page", "/nowhere", ""},
	}
	for _, width := range []int64{390, 1280} {
		for _, pg := range pages {
			wait := chromedp.WaitVisible(chromedp.CSS("main"))
			if pg.wait != "" {
				wait = chromedp.WaitVisible(chromedp.ID(pg.wait))
			}
			do(fmt.Sprintf("%s at %d px", pg.name, width), chromedp.EmulateViewport(width, 844), chromedp.Navigate(u.url+pg.path), wait)
			if pg.name == "jobs" && width == 390 {
				shot(t, ctx, "phone")
			}
			fitsWidth(t, ctx, fmt.Sprintf("the %s page at %d px", pg.name, width))
		}
		// The editor is there to type in: whole and of a usable width.
		do("new job", chromedp.Navigate(u.url+"/jobs/new"), chromedp.WaitVisible(chromedp.ID("preview")))
		if ok := eval[bool](t, ctx, `(() => { const r = document.getElementById("template_text").getBoundingClientRect(); return r.left >= 0 && r.right <= innerWidth && r.width >= innerWidth * 0.5 || r.width >= 600; })()`); !ok {
			t.Errorf("at %d px the template editor is cut off or too narrow", width)
		}
	}
	// The login page, without a session.
	for _, width := range []int64{390, 1280} {
		do("log out", chromedp.EmulateViewport(width, 844), chromedp.Navigate(u.url+"/login"), chromedp.WaitVisible(chromedp.CSS("main")))
		fitsWidth(t, ctx, fmt.Sprintf("the login page at %d px", width))
	}
}

// fitsWidth fails when the page is wider than the window, or when an
// element sticks out of it other than inside a scroller of its own (a
// table's, a hex dump's) that itself fits.
func fitsWidth(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	got := eval[string](t, ctx, `(() => {
		const W = document.documentElement.clientWidth, bad = [];
		for (const el of document.body.querySelectorAll("*")) {
			const r = el.getBoundingClientRect();
			if (r.width === 0 || r.right <= W + 1 || r.left < -1000) continue;
			let p = el.parentElement, clipped = false;
			for (; p && p !== document.body; p = p.parentElement) {
				if (getComputedStyle(p).overflowX !== "visible") { clipped = p.getBoundingClientRect().right <= W + 1; break; }
			}
			if (!clipped) bad.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
				(typeof el.className === "string" && el.className ? "." + el.className.trim().split(/\s+/).join(".") : "") + " to " + Math.round(r.right) + " px");
		}
		const sw = document.documentElement.scrollWidth;
		return sw > W + 1 || bad.length ? "the page is " + sw + " px wide in a " + W + " px window; sticking out: " + bad.slice(0, 6).join(", ") : "";
	})()`)
	if got != "" {
		t.Errorf("%s: %s", what, got)
	}
}
