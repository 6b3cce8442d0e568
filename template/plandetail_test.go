package template

import (
	"fmt"
	"strings"
	"testing"
)

// The plan detail (the report's plan line and plan_detail) stays short
// whatever the number of streams: 10,000 streams that each prerender one
// frame made a line of 857 KB, one clause per stream. Consecutive streams
// with the same plan share a clause, and after 16 clauses the rest are
// counted, not listed.
func TestPlanDetailBoundedForManyStreams(t *testing.T) {
	var b strings.Builder
	b.WriteString("streams:\n")
	b.WriteString("  - {name: first, size: {from: 64, to: 67}, ipv4: {}, udp: {}}\n")
	for i := range 10000 {
		fmt.Fprintf(&b, "  - {name: s%d, ipv4: {src: 198.18.%d.%d}, udp: {dst: %d}}\n", i+1, i/256, i%256, 1000+i)
	}
	s, err := Parse("many.wpg.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	src, err := Compile(s, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	_, detail := src.Plan()
	want := "stream 0 (first): prerendered 4 frames (262 B), one period of its fields, replayed; " +
		"streams 1-10000 (s1 … s10000), each: prerendered 1 frame (64 B), one period of its fields, replayed"
	if detail != want {
		t.Fatalf("detail (%d bytes) %.300q\nwant %q", len(detail), detail, want)
	}

	// Streams that each differ: 16 clauses, then a count.
	b.Reset()
	b.WriteString("streams:\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "  - {name: s%d, count: %d, ipv4: {}, udp: {src: {from: 1, to: 65535}}}\n", i, i+1)
	}
	if s, err = Parse("many.wpg.yaml", []byte(b.String())); err != nil {
		t.Fatal(err)
	}
	if src, err = Compile(s, CompileOptions{}); err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	_, detail = src.Plan()
	if n := strings.Count(detail, "; "); n != 16 || len(detail) > 2000 ||
		!strings.HasPrefix(detail, "stream 0 (s0): prerendered 1 frame (64 B), the whole count; stream 1 (s1): prerendered 2 frames (128 B), the whole count;") ||
		!strings.HasSuffix(detail, "; and 984 more streams (16-999)") {
		t.Fatalf("detail (%d bytes, %d clauses) %q", len(detail), n+1, detail)
	}
}
