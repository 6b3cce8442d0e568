// Package chromium starts Debian's headless Chromium (/usr/bin/chromium)
// for the tests that drive a browser with chromedp: wpg serve's UI,
// the pages of wpg report html. It skips the test, with the package to
// install, where Chromium is missing (a failure under CI=true).
package chromium

import (
	"context"
	"errors"
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
		chromedp.WindowSize(width, height),
	)
	// Chromium sometimes exits before it listens when the machine is
	// loaded (a full suite on two CPUs: "chrome failed to start" after
	// its D-Bus warnings): a start is tried three times, each failure
	// logged, before the test fails.
	var errs []error
	for try := range 3 {
		if try > 0 {
			time.Sleep(time.Second)
		}
		// A fresh profile each try: a failed start may leave its lock.
		actx, cancelA := chromedp.NewExecAllocator(context.Background(), append(opts, chromedp.UserDataDir(t.TempDir()))...)
		ctx, cancelB := chromedp.NewContext(actx)
		ctx, cancelC := context.WithTimeout(ctx, 2*time.Minute)
		if err := chromedp.Do(ctx); err != nil {
			cancelC()
			cancelB()
			cancelA()
			t.Logf("starting chromium (try %d of 3): %v", try+1, err)
			errs = append(errs, err)
			continue
		}
		t.Cleanup(func() { cancelC(); cancelB(); cancelA() })
		return ctx
	}
	t.Fatalf("starting chromium, three times: %v", errors.Join(errs...))
	return nil
}
