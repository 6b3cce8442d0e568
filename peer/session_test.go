//go:build linux

package peer

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/syncbuf"
)

// A socket path's session refuses the pipe's stream peer, and starts
// nothing.
func TestSessionRefusesStream(t *testing.T) {
	var s Session
	launched := false
	o := backend.Options{Peer: backend.Peer{Mode: backend.PeerStream}, Env: backend.Env{Launcher: func(string) (*exec.Cmd, error) {
		launched = true
		return exec.Command("true"), nil
	}}}
	err := s.Reach(context.Background(), "shm", o, time.Second, RecvRequest{})
	if err == nil || !strings.Contains(err.Error(), "--connect SOCK") || launched || s.Child != nil {
		t.Fatalf("Reach(PeerStream) = %v (launched %v); want a refusal naming --connect and nothing started", err, launched)
	}
}

// The session starts its receiver through the injected launcher, passes
// the child's stderr to Env.Stderr, and keeps its tail for the error of a
// child that exits before answering.
func TestSessionUsesLauncherAndStderr(t *testing.T) {
	var got []string
	var stderr syncbuf.Buffer
	o := backend.Options{Verify: "off", Env: backend.Env{Stderr: &stderr, Launcher: func(sock string) (*exec.Cmd, error) {
		got = append(got, sock)
		return exec.Command("sh", "-c", "echo no receiver here >&2; exit 3"), nil
	}}}
	var s Session
	err := s.Reach(context.Background(), "unix", o, 5*time.Second, RecvRequest{})
	if err == nil || !strings.Contains(err.Error(), "no receiver here") {
		t.Fatalf("Reach with a child that exits = %v; want its stderr in the error", err)
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "@wpg-unix-") {
		t.Errorf("launcher got %q; want only the socket @wpg-unix-…", got)
	}
	if !strings.Contains(stderr.String(), "no receiver here") {
		t.Errorf("Env.Stderr got %q; want the child's stderr", stderr.String())
	}
}
