package template

import (
	"path/filepath"
	"testing"
)

// A stream's layout allocates its slots, headers, checksums and length
// fields once, at the size its measuring pass counted: a template of
// 65,535 streams compiles every one of them, and slices grown by
// doubling took several times what they ended with (docs/perf.md,
// "Reading templates in bounded memory").
func TestLayoutSizedOnce(t *testing.T) {
	files, err := filepath.Glob("../examples/*.wpg.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		spec := mustLoad(t, f)
		for i := range spec.Streams {
			st := &spec.Streams[i]
			if st.Replay != nil {
				continue
			}
			L := newLayout(st, 0)
			for _, c := range []struct {
				what     string
				len, cap int
			}{{"slots", len(L.slots), cap(L.slots)}, {"headers", len(L.hdrs), cap(L.hdrs)},
				{"checksums", len(L.cks), cap(L.cks)}, {"length fields", len(L.lens), cap(L.lens)}} {
				if c.len != c.cap {
					t.Errorf("%s stream %d: %d %s in a slice of capacity %d", filepath.Base(f), i, c.len, c.what, c.cap)
				}
			}
		}
	}
}
