package template

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadRefusesNonRegular: `wpg preview /dev/zero` read without end, and
// a FIFO blocked; both are refused before reading (item 22).
func TestLoadRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "t.wpg.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/dev/zero", fifo, dir} {
		done := make(chan error, 1)
		go func() { _, err := Load(path); done <- err }()
		var err error
		select {
		case err = <-done:
		case <-time.After(time.Minute): // not a timing assertion: a hang is the failure
			t.Fatalf("Load(%s) did not return", path)
		}
		var te *Error
		if !errors.As(err, &te) || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), "save it to a file first") {
			t.Errorf("Load(%s) = %v, want a not-a-regular-file error with the fix", path, err)
		}
	}
}

// TestLoadSizeLimit: a template file above MaxTemplateBytes is refused
// with the limit named, before parsing.
func TestLoadSizeLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.wpg.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxTemplateBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = Load(path)
	if err == nil || !strings.Contains(err.Error(), "exceeds the limit of 16.0 MiB on template files") {
		t.Fatalf("Load of a 16 MiB + 1 file: %v", err)
	}
}

// TestByteOrderMark: a UTF-8 BOM (some editors write one) is not part of
// the first key (item 32: unknown key "\ufeffstreams").
func TestByteOrderMark(t *testing.T) {
	s, err := Parse("bom.wpg.yaml", []byte("\ufeffstreams:\n  - ipv4: {}\n    udp: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Streams) != 1 || s.Streams[0].UDP == nil {
		t.Fatalf("streams %+v", s.Streams)
	}
}

// TestSizeFromPayload: a stream without size: gets a frame that holds its
// payload as written instead of a 64-byte frame that cuts it (item 12).
func TestSizeFromPayload(t *testing.T) {
	const dns = "123401000001000000000000076578616d706c6503636f6d0000010001" // 29 bytes: example.com A
	for _, c := range []struct {
		yaml string
		size int
	}{
		{"streams:\n  - ipv4: {}\n    udp: {dst: 53}\n    payload: {pattern: \"" + dns + "\"}\n", 42 + 29 + 20},
		{"streams:\n  - ipv4: {}\n    udp: {dst: 53}\n    signature: false\n    payload: {pattern: \"" + dns + "\"}\n", 42 + 29},
		{"streams:\n  - ipv6: {}\n    udp: {}\n    payload: {text: \"" + strings.Repeat("y", 100) + "\"}\n", 62 + 100 + 20},
		{"streams:\n  - ipv4: {}\n    udp: {}\n    payload: {fields: [{offset: 30, width: 4, value: 7}]}\n", 42 + 34 + 20},
		{"streams:\n  - ipv4: {}\n    udp: {}\n    payload: {pattern: \"ab\"}\n", 64},
	} {
		s, err := Parse("p.wpg.yaml", []byte(c.yaml))
		if err != nil {
			t.Fatalf("%s: %v", c.yaml, err)
		}
		if got := int(s.Streams[0].Size.From); got != c.size {
			t.Errorf("%s: frame size %d, want %d", c.yaml, got, c.size)
		}
		frames, err := Preview(s, 1)
		if err != nil {
			t.Fatal(err)
		}
		f := frames[0].Bytes
		if len(f) != c.size {
			t.Errorf("rendered %d bytes, want %d", len(f), c.size)
		}
		if strings.Contains(c.yaml, dns) && !strings.Contains(string(f), "\x07example\x03com\x00") {
			t.Errorf("the DNS name was cut: % x", f)
		}
	}
}

// TestErrorEscapesControlCharacters: names and values from the template
// reach error messages with control characters escaped (item 33).
func TestErrorEscapesControlCharacters(t *testing.T) {
	_, err := Load("/nonexistent/\x1b[31mred\a.wpg.yaml")
	if err == nil {
		t.Fatal("no error")
	}
	_, err = Parse("t\x1b.wpg.yaml", []byte("streams:\n  - name: \"a\\x1bb\"\n    udpp: {}\n"))
	if err == nil || strings.ContainsAny(err.Error(), "\x1b\a\x00") || !strings.Contains(err.Error(), `t\x1b.wpg.yaml`) {
		t.Errorf("error %q: control characters not escaped", err)
	}
}

// TestPreviewEscapesStreamNames: wpg preview prints stream names with ESC,
// BEL and NUL escaped (item 33); the JSON keeps the name as written.
func TestPreviewEscapesStreamNames(t *testing.T) {
	s, err := Parse("n.wpg.yaml", []byte("streams:\n  - name: \"evil\\e[2J\\a\\0\"\n    ipv4: {}\n    udp: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	frames, err := Preview(s, 1)
	if err != nil {
		t.Fatal(err)
	}
	if frames[0].Name != "evil\x1b[2J\a\x00" {
		t.Fatalf("name %q", frames[0].Name)
	}
	var b strings.Builder
	if err := frames[0].WriteText(&b); err != nil {
		t.Fatal(err)
	}
	title, _, _ := strings.Cut(b.String(), "\n")
	if want := `stream 0 (evil\x1b[2J\a\x00)`; !strings.Contains(title, want) {
		t.Errorf("title %q, want it to contain %q", title, want)
	}
}

// TestDefaultWithSizeRange: `wpg bench --size 1MiB` said "embedded default
// template with size 1048576:8:11 ... use a value in 0..9216" (item 32):
// the error quotes the default's own range and points at the local paths.
func TestDefaultWithSizeRange(t *testing.T) {
	for _, n := range []int64{1 << 20, 61, 9217} {
		_, err := DefaultWithSize(n)
		if err == nil {
			t.Fatalf("size %d: no error", n)
		}
		msg := err.Error()
		for _, want := range []string{"outside the 62..9216 bytes of the embedded default template", "--backend shm"} {
			if !strings.Contains(msg, want) {
				t.Errorf("size %d: %q lacks %q", n, msg, want)
			}
		}
		if strings.Contains(msg, ":8:11") || strings.Contains(msg, "0..9216") {
			t.Errorf("size %d: %q has the old location or range", n, msg)
		}
	}
	for _, n := range []int64{62, 1500, 9216} {
		if s, err := DefaultWithSize(n); err != nil || s.Streams[0].Size.From != uint64(n) {
			t.Errorf("size %d: %v", n, err)
		}
	}
}
