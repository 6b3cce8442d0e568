// Package chromium starts Debian's headless Chromium (/usr/bin/chromium)
// for the tests that drive a browser with chromedp: wpg serve's UI,
// the pages of wpg report html. It skips the test, with the package to
// install, where Chromium is missing (a failure under CI=true).
package chromium

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// Tab starts headless Chromium with a fresh profile, a window of width ×
// height and its own network services off, and returns a context for
// one tab (chromedp.Run, chromedp.Do), cancelled, and Chromium ended,
// when the test ends or after two minutes.
func Tab(t testing.TB, width, height int) context.Context {
	t.Helper()
	exe := testbed.RequireTool(t, "chromium", "chromium")
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelC := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelC(); cancelB(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}
