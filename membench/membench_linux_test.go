//go:build linux

package membench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/memread"
)

const peerEnv = "WPG_MEMBENCH_TEST_PEER"

// TestMain turns the test binary into the exporter when Run starts it.
func TestMain(m *testing.M) {
	if os.Getenv(peerEnv) == "1" {
		if err := ServePeer(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func testConfig(sizes []int64, methods []Method, iters int) Config {
	return Config{
		Sizes:    sizes,
		Methods:  methods,
		Iters:    iters,
		MinBytes: 4 << 20,
		PeerArgs: []string{os.Args[0], "-test.run=^$"},
		PeerEnv:  append(os.Environ(), peerEnv+"=1"),
	}
}

func TestRunSmallMatrixVerified(t *testing.T) {
	rep, err := Run(context.Background(), testConfig([]int64{4 << 10, 1 << 20, 100003}, nil, 2))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Verified {
		t.Fatalf("report not verified: %+v", rep.Results)
	}
	for _, mi := range rep.Methods {
		if !mi.Available && mi.Name != XPMEMCopy && mi.Name != XPMEMDirect {
			t.Errorf("%s not available: %s", mi.Name, mi.Reason)
		}
	}
	seen := map[Method]int{}
	for _, r := range rep.Results {
		seen[r.Method]++
		if len(r.Iterations) != 2 || r.ColdGBps <= 0 || r.WarmGBps <= 0 || r.BestGBps < r.WarmGBps && r.BestGBps < r.ColdGBps {
			t.Errorf("%s %d: iterations %+v cold %v warm %v best %v", r.Method, r.Size, r.Iterations, r.ColdGBps, r.WarmGBps, r.BestGBps)
		}
		if !r.Verified || r.Checked < 2 || r.Checksum == "" {
			t.Errorf("%s %d: verified %v after %d checks of %s", r.Method, r.Size, r.Verified, r.Checked, r.Checksum)
		}
		if r.Iterations[1].Bytes < 4<<20 {
			t.Errorf("%s %d: warm iteration moved %d bytes, want ≥ 4 MiB", r.Method, r.Size, r.Iterations[1].Bytes)
		}
	}
	for _, m := range []Method{LocalCopy, SHMCopy, SHMDirect, CMACopy, Pipe} {
		if seen[m] != 3 {
			t.Errorf("%s ran %d sizes, want 3", m, seen[m])
		}
	}
	var out bytes.Buffer
	rep.WriteTable(&out)
	for _, want := range []string{"=== system ===", "kernel:", "in-place read:", "warm bandwidth", "cold bandwidth", "SHM-dir", "4K", "1M", "100003", "verified: all"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	t.Log("\n" + out.String())
}

// A peer that does not exist gives a clear error.
func TestRunPeerMissing(t *testing.T) {
	cfg := testConfig([]int64{4096}, []Method{CMACopy}, 1)
	cfg.PeerArgs = []string{"/nonexistent/wpg-peer"}
	_, err := Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "start the exporter process") {
		t.Fatalf("err = %v", err)
	}
}

// A peer that exits at once is reported with its exit.
func TestRunPeerDies(t *testing.T) {
	cfg := testConfig([]int64{4096}, []Method{CMACopy}, 1)
	cfg.PeerEnv = nil // the test binary then runs no tests and exits
	_, err := Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "exporter process") {
		t.Fatalf("err = %v", err)
	}
}

func TestLocalOnlyNeedsNoPeer(t *testing.T) {
	cfg := testConfig([]int64{64 << 10}, []Method{LocalCopy}, 3)
	cfg.PeerArgs = []string{"/nonexistent/never-started"}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 || !rep.Results[0].Verified {
		t.Fatalf("results %+v", rep.Results)
	}
}

func TestJSONSchemaFields(t *testing.T) {
	rep, err := Run(context.Background(), testConfig([]int64{4096}, []Method{SHMDirect, XPMEMCopy}, 2))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema", "system", "sizes", "iters", "reader", "copy", "methods", "results", "verified"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if m["schema"] != Schema {
		t.Errorf("schema %v", m["schema"])
	}
	sysm := m["system"].(map[string]any)
	for _, k := range []string{"date", "host", "kernel", "cpu", "cores", "memory_bytes"} {
		if _, ok := sysm[k]; !ok {
			t.Errorf("JSON system lacks %q", k)
		}
	}
	res := m["results"].([]any)[0].(map[string]any)
	for _, k := range []string{"method", "size", "iterations", "cold_gbps", "warm_gbps", "best_gbps", "checksum", "checked", "verified"} {
		if _, ok := res[k]; !ok {
			t.Errorf("JSON result lacks %q", k)
		}
	}
	if _, err := os.Stat("/dev/xpmem"); err != nil {
		meths := m["methods"].([]any)
		xp := meths[1].(map[string]any)
		if xp["available"] != false || !strings.Contains(xp["reason"].(string), "xpmem module not loaded") {
			t.Errorf("XPMEM-cpy without /dev/xpmem: %v", xp)
		}
	}
}

// Two runs in one process each use the reader and copy they were given:
// the choice is per run, not a process-wide switch (run it with -race).
func TestConcurrentRunsKeepTheirReaderAndCopy(t *testing.T) {
	cfgs := []Config{
		testConfig([]int64{64 << 10}, []Method{LocalCopy}, 2),
		testConfig([]int64{64 << 10}, []Method{LocalCopy}, 2),
	}
	cfgs[0].Reader, cfgs[0].Copy = "go", "go"
	cfgs[1].Reader, cfgs[1].Copy = "auto", "auto"
	want := make([]string, len(cfgs))
	for i, c := range cfgs {
		r, err := memread.Lookup(c.Reader)
		if err != nil {
			t.Fatal(err)
		}
		cp, err := memread.LookupCopy(c.Copy)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = r.How + " | " + cp.How()
	}
	reps := make([]*Report, len(cfgs))
	errs := make([]error, len(cfgs))
	var wg sync.WaitGroup
	for i := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], errs[i] = Run(context.Background(), cfgs[i])
		}()
	}
	wg.Wait()
	for i := range cfgs {
		if errs[i] != nil {
			t.Fatalf("run %d: %v", i, errs[i])
		}
		if got := reps[i].Reader + " | " + reps[i].Copy; got != want[i] {
			t.Errorf("run %d (reader %s, copy %s) reported %q, want %q", i, cfgs[i].Reader, cfgs[i].Copy, got, want[i])
		}
		if !reps[i].Verified {
			t.Errorf("run %d: not verified", i)
		}
	}
}

// TestInterruptedIsNotBadData: a run stopped in a cell (Ctrl-C) keeps the
// cells that finished and says it was interrupted; it said "verified: NO"
// with the cell's "context canceled" as its error, as if data had been
// wrong.
func TestInterruptedIsNotBadData(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := testConfig([]int64{4096, 8192}, []Method{LocalCopy}, 1000)
	cfg.Progress = func(Result) { cancel() } // stop in the second cell
	rep, err := Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) || rep == nil {
		t.Fatalf("rep %v, err %v", rep, err)
	}
	if !rep.Interrupted || !rep.Verified || len(rep.Results) != 1 || rep.Results[0].Error != "" {
		t.Fatalf("interrupted %v verified %v results %+v", rep.Interrupted, rep.Verified, rep.Results)
	}
	var out bytes.Buffer
	rep.WriteTable(&out)
	if s := out.String(); !strings.Contains(s, "interrupted: the cells above finished") || strings.Contains(s, "verified: NO") || strings.Contains(s, "error") {
		t.Errorf("table of an interrupted run:\n%s", s)
	}

	// Stopped inside a cell: 1000 iterations of 64 MiB each do not end
	// before the cancel.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	cfg = testConfig([]int64{4096}, []Method{LocalCopy}, 1000)
	cfg.MinBytes = 64 << 20
	stop := time.AfterFunc(20*time.Millisecond, cancel)
	defer stop.Stop()
	rep, err = Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) || rep == nil || !rep.Interrupted || !rep.Verified || len(rep.Results) != 0 {
		t.Fatalf("stopped in a cell: err %v, report %+v", err, rep)
	}
}

// TestTinySizeIsBounded: a warm iteration of a size of a few bytes
// repeats at most MaxOpsPerIteration times (64 MiB of 3-byte copies took
// minutes a cell with CMA-cpy), and the header says so.
func TestTinySizeIsBounded(t *testing.T) {
	cfg := testConfig([]int64{3}, []Method{LocalCopy}, 2)
	cfg.MinBytes = 64 << 20
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if it := rep.Results[0].Iterations[1]; it.Ops != MaxOpsPerIteration {
		t.Errorf("warm iteration of 3 B: %d operations, want %d", it.Ops, MaxOpsPerIteration)
	}
	var out bytes.Buffer
	rep.WriteTable(&out)
	if s := out.String(); !strings.Contains(s, "at most 1048576 times") || !strings.Contains(s, "warm = iteration 2") {
		t.Errorf("header:\n%s", s)
	}
}
