package wire

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

type msg struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

// A message goes through Write and Read unchanged, and Read takes exactly
// one message off the stream.
func TestRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, "k", 1, msg{"a", 1}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, "k", 1, msg{"b", 2}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []msg{{"a", 1}, {"b", 2}} {
		var got msg
		if err := Read(&b, "k", 1, &got); err != nil || got != want {
			t.Fatalf("Read = %+v, %v; want %+v", got, err, want)
		}
	}
}

// Bad messages are refused with an error that says what is wrong.
func TestRefusals(t *testing.T) {
	enc := func(kind string, version int) []byte {
		var b bytes.Buffer
		if err := Write(&b, kind, version, msg{"x", 1}); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	var huge [4]byte
	binary.BigEndian.PutUint32(huge[:], MaxMessage+1)
	garbage := append(binary.BigEndian.AppendUint32(nil, 5), "hello"...)
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"unknown version", enc("k", 2), "version 2, this wpg speaks version 1"},
		{"other kind", enc("j", 1), `got a "j" message`},
		{"oversized", huge[:], "more than the limit"},
		{"not a message", garbage, "not a wpg message"},
		{"truncated", enc("k", 1)[:10], "unexpected EOF"},
	} {
		var m msg
		err := Read(bytes.NewReader(c.in), "k", 1, &m)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Read = %v; want an error containing %q", c.name, err, c.want)
		}
	}
	if _, err := Encode("k", 1, strings.Repeat("x", MaxMessage)); err == nil || !strings.Contains(err.Error(), "more than the limit") {
		t.Errorf("Encode of an oversized body = %v; want a refusal", err)
	}
}
