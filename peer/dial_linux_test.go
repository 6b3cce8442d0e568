//go:build linux

package peer

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDialStoppedSaysWhat: a sender stopped (Ctrl-C, SIGTERM) while it
// waits for a receiver that does not listen yet says what it was waiting
// for, not the bare "context canceled"; the error still is the context's.
func TestDialStoppedSaysWhat(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "nobody.sock")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := Dial(ctx, sock, time.Minute, nil)
	if err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped while waiting for the receiver at "+sock+" to listen") || !strings.Contains(err.Error(), "no such file or directory") {
		t.Errorf("Dial cancelled: %v; want it to name the socket and the last attempt's error, wrapping context.Canceled", err)
	}
}

// TestListenErrorSaysWhy: `wpg recv --listen PATH` that cannot listen says
// why in terms of the path: a directory that does not exist, or a socket
// someone listens on (or a stale file); it told every case to remove a
// stale socket file.
func TestListenErrorSaysWhy(t *testing.T) {
	dir := t.TempDir()
	_, err := listen(filepath.Join(dir, "no-such-dir", "rx.sock"))
	if err == nil || !strings.Contains(err.Error(), "its directory does not exist: create it, or choose another --listen path") || strings.Contains(err.Error(), "stale") {
		t.Errorf("missing directory: %v", err)
	}
	sock := filepath.Join(dir, "rx.sock")
	l, err := listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := listen(sock); err == nil || !strings.Contains(err.Error(), "another receiver listens there, or a stale socket file is left") {
		t.Errorf("socket in use: %v", err)
	}
}
