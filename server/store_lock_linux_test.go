package server

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// TestStoreLockedByAnotherServer: a second server on a job database in use
// is refused, naming the database and how to go on, and leaves the first
// one's running jobs alone (it used to mark them interrupted, then fail to
// bind the port); once the first closes, the database opens again.
func TestStoreLockedByAnotherServer(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jobs.db")
	s1, err := New(context.Background(), Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, s: s1, hs: httptest.NewServer(s1.Handler())}
	v := ts.create(`{"rate": "1kpps"}`)
	_, err = New(context.Background(), Options{DB: db})
	if err == nil || !strings.Contains(err.Error(), "job database "+db+" is in use by another wpg serve") || !strings.Contains(err.Error(), "give this one another --db") {
		t.Fatalf("second server on the database: %v", err)
	}
	rec, err := ts.s.store.Get(context.Background(), v.ID)
	if err != nil || rec.Status != StatusRunning {
		t.Errorf("the first server's running job after the refused second: %+v %v", rec, err)
	}
	ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", v.ID), nil)
	ts.wait(v.ID)
	ts.hs.Close()
	if err := ts.s.Close(); err != nil {
		t.Fatal(err)
	}
	st, _, err := OpenStore(context.Background(), db)
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	st.Close()
}
