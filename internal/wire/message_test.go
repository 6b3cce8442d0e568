package wire

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// A reader that takes messages of several kinds in turn reads each whole
// (ReadMessage), tells its kind (Kind) and decodes it (Decode); an
// oversized length is refused before its body is read.
func TestReadMessageKinds(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, "a", 1, msg{"x", 1}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, "b", 1, msg{"y", 2}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		kind string
		m    msg
	}{{"a", msg{"x", 1}}, {"b", msg{"y", 2}}} {
		m, err := ReadMessage(&b, "test")
		if err != nil {
			t.Fatal(err)
		}
		k, err := Kind(m)
		if err != nil || k != want.kind {
			t.Fatalf("Kind = %q, %v; want %q", k, err, want.kind)
		}
		var got msg
		if err := Decode(m, k, 1, &got); err != nil || got != want.m {
			t.Fatalf("Decode = %+v, %v; want %+v", got, err, want.m)
		}
	}
	if _, err := Kind([]byte(`{"body":1}`)); err == nil || !strings.Contains(err.Error(), "not a wpg message") {
		t.Fatalf("Kind of a message without a kind: %v", err)
	}
	var h [4]byte
	binary.BigEndian.PutUint32(h[:], MaxMessage+1)
	if _, err := ReadMessage(bytes.NewReader(h[:]), "test"); err == nil || !strings.Contains(err.Error(), "more than the limit") {
		t.Fatalf("oversized: %v", err)
	}
}
