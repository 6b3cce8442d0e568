package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// tinyFS mounts a tmpfs of size bytes on a fresh directory for the test
// (root: mount(8)), unmounted at its end.
func tinyFS(t *testing.T, size int) string {
	t.Helper()
	testbed.RequireRoot(t)
	testbed.RequireTool(t, "mount", "mount")
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d,mode=0700", size), "wpg-test", dir).CombinedOutput(); err != nil {
		testbed.Skip(t, "mount a tmpfs: %v: %s (needs CAP_SYS_ADMIN)", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fill writes into path until the filesystem is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v", path, err)
			}
			return
		}
	}
}

// lockedBuffer is a log the server and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// get returns job id as the API shows it.
func (ts *testServer) get(id int64) JobView {
	ts.t.Helper()
	code, data := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d", id), nil)
	var v JobView
	if code != http.StatusOK || json.Unmarshal(data, &v) != nil {
		ts.t.Fatalf("get %d: %d %s", id, code, data)
	}
	return v
}

// TestDiskFullAtJobEnd: a job that ends while the database's disk is full
// keeps its result in memory, and the API says what the database holds
// (running, with a note) instead of "done"; once there is room again, the
// retry stores its end and every sample it had. A server shut down while
// the disk is still full logs the report it could not store, and after a
// restart the job reads interrupted without claiming samples were kept.
func TestDiskFullAtJobEnd(t *testing.T) {
	dir := tinyFS(t, 4<<20)
	db, filler := filepath.Join(dir, "jobs.db"), filepath.Join(dir, "filler")
	logs := &lockedBuffer{}
	opt := Options{DB: db, Logger: slog.New(slog.NewTextHandler(logs, nil))}
	ts := newTest(t, opt)
	ts.s.storeRetry = 20 * time.Millisecond

	v := ts.create(`{"name": "full", "rate": "1kpps"}`)
	// A sample stored, then the disk full, then the job past its second
	// second (a sample due while full): waited for, not slept, so that
	// a loaded machine that starts the job late still gives three.
	until := func(what string, done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !done(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("job %d: no %s after 20 s", v.ID, what)
			}
		}
	}
	until("stored sample", func() bool {
		xs, err := ts.s.Store().Samples(context.Background(), v.ID)
		return err == nil && len(xs) > 0
	})
	fill(t, filler)
	until("third second", func() bool { return ts.get(v.ID).Frames > 2100 })
	ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", v.ID), nil)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "the job's end is not stored") {
		if time.Now().After(deadline) {
			t.Fatalf("no log of the failed store:\n%s", logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	got := ts.get(v.ID)
	if got.Status != StatusRunning || !strings.Contains(got.Error, "not stored yet") {
		t.Fatalf("while the disk is full the job reads %s (%q); want running with a note: the database holds running", got.Status, got.Error)
	}
	if code, _ := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d/report", v.ID), nil); code != http.StatusConflict {
		t.Errorf("its report while unstored: %d; want 409 (running)", code)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	got = ts.wait(v.ID)
	rec, err := ts.s.Store().Get(context.Background(), v.ID)
	if got.Status != StatusStopped || !got.HasReport || err != nil || rec.Status != StatusStopped || rec.Report == nil {
		t.Fatalf("after room came back: %+v; stored %+v, %v", got, rec, err)
	}
	xs, err := ts.s.Store().Samples(context.Background(), v.ID)
	if err != nil || len(xs) < 3 {
		t.Fatalf("samples %v, %v; want every second, also those of the full disk", xs, err)
	}
	for i, x := range xs {
		if x.T != int64(i+1) {
			t.Fatalf("sample %d is second %d: %v", i, x.T, xs)
		}
	}
	if last := xs[len(xs)-1]; last.Frames != got.Frames {
		t.Errorf("the last sample has %d frames, the report %d", last.Frames, got.Frames)
	}

	// Full again, and the server shuts down before there is room.
	w := ts.create(`{"name": "lost", "rate": "1kpps"}`)
	fill(t, filler)
	ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", w.ID), nil)
	ts.hs.Close()
	if err := ts.s.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	l := logs.String()
	if !strings.Contains(l, fmt.Sprintf("job=%d", w.ID)) || !strings.Contains(l, "wpg.report/v2") {
		t.Errorf("the log lacks the unstored job's report:\n%s", l)
	}
	os.Remove(filler)
	ts2 := newTest(t, Options{DB: db})
	got = ts2.get(w.ID)
	if got.Status != StatusInterrupted {
		t.Fatalf("after the restart: %+v; want interrupted", got)
	}
	xs, _ = ts2.s.Store().Samples(context.Background(), w.ID)
	if len(xs) == 0 && strings.Contains(got.Error, "kept") {
		t.Errorf("no sample of job %d was stored, and its note says %q", w.ID, got.Error)
	}
}
