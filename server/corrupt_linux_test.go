package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCorruptDatabase: a database with a damaged page, any page, is
// either refused at the start with what is wrong and what to do, or reads
// whole; before, a server started on a damaged jobs page and then answered
// every call with 500. A file that is no database is refused too.
func TestCorruptDatabase(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "jobs.db")
	st, _, err := OpenStore(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		rec := &JobRecord{Name: strings.Repeat("n", 300), Spec: `{"rate":"1kpps"}`, Status: StatusDone, CreatedAt: time.Now().UnixNano(), StartedAt: time.Now().UnixNano(), Report: []byte(`{"frames": 1}`)}
		if err := st.Insert(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		st.Finish(context.Background(), rec)
		for j := range 20 {
			st.AddSample(context.Background(), rec.ID, Sample{T: int64(j + 1), Frames: uint64(i)})
		}
	}
	st.Close()
	good, err := os.ReadFile(db)
	if err != nil || len(good) < 8*4096 {
		t.Fatalf("the database: %d bytes, %v", len(good), err)
	}
	refused := 0
	for page := 2; page*4096 <= len(good); page++ {
		bad := filepath.Join(dir, fmt.Sprintf("page%d.db", page))
		data := slices.Clone(good)
		for off := (page - 1) * 4096; off < page*4096; off++ {
			data[off] = byte(off * 7)
		}
		if err := os.WriteFile(bad, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := New(context.Background(), Options{DB: bad})
		if err != nil {
			refused++
			if !strings.Contains(err.Error(), "is damaged") || !strings.Contains(err.Error(), "quick_check") || !strings.Contains(err.Error(), "mv "+bad+" "+bad+".damaged") {
				t.Errorf("page %d damaged: %v; want it refused, naming the check and the fix", page, err)
			}
			continue
		}
		// Started: then everything it holds must read.
		recs, _, err := s.store.List(context.Background(), 0, 100)
		for _, rec := range recs {
			if err == nil {
				_, err = s.store.Samples(context.Background(), rec.ID)
			}
		}
		if err != nil {
			t.Errorf("page %d damaged: the server started, then: %v", page, err)
		}
		s.Close()
	}
	if refused == 0 {
		t.Error("no damaged page was refused")
	}
	notDB := filepath.Join(dir, "not.db")
	os.WriteFile(notDB, []byte(strings.Repeat("this is not a database\n", 500)), 0o600)
	if _, err := New(context.Background(), Options{DB: notDB}); err == nil || !strings.Contains(err.Error(), "is damaged") || !strings.Contains(err.Error(), "not a database") {
		t.Errorf("a file that is not a database: %v", err)
	}
}

// TestFailuresLogged: every answer with status 500 is logged with what it
// said, pages and API alike, so the fix "its log says more" holds.
func TestFailuresLogged(t *testing.T) {
	logs := &lockedBuffer{}
	ts := newTest(t, Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	v := ts.create(`{"count": 10}`)
	ts.wait(v.ID)
	ts.s.store.db.Close() // the database fails from now on
	for _, path := range []string{"/api/v1/jobs", fmt.Sprintf("/api/v1/jobs/%d", v.ID), fmt.Sprintf("/jobs/%d", v.ID)} {
		resp, body := ts.page("GET", path, nil, nil)
		if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body, "its log says more") && strings.HasPrefix(path, "/api/") {
			t.Errorf("GET %s with a failing database: %d %.200s", path, resp.StatusCode, body)
		}
		l := logs.String()
		if !strings.Contains(l, "path="+path) || !strings.Contains(l, "status=500") || !strings.Contains(l, "database is closed") {
			t.Errorf("GET %s: 500 not logged with its error:\n%s", path, l)
		}
	}
}
