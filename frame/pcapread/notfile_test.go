package pcapread_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wpg-dev/wpg/frame/pcapread"
)

// TestNotAFile: a directory or a FIFO given as the capture is refused in
// words ("a directory", "a named pipe"), and a FIFO is refused without
// opening it: opening one waits for a writer, and wpg hung there.
func TestNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{dir: "a directory", fifo: "a named pipe"} {
		_, err := pcapread.Open(path)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "give a pcap or pcapng file") {
			t.Errorf("%s: %v; want %q", path, err, want)
		}
		if _, err := pcapread.Scan(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Scan %s: %v; want %q", path, err, want)
		}
	}
}
