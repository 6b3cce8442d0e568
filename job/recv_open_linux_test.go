//go:build linux

package job

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/wpg-dev/wpg/backend/pipe"
	"github.com/wpg-dev/wpg/peer"
)

// A pipe receiver started with --listen (the receiver `wpg bench --backend
// pipe` starts) opens its reading side, buffer sized for the largest
// frame, before it accepts the sender's request: the pipe's sender starts
// its timed run on the accept (it has no hello to wait for), so a receiver
// that accepted first spent the run's first seconds allocating (1 GiB
// frames: the sender gave up, "the reader read nothing for 2s"), and one
// that could not open told its sender nothing. Here the open fails (its
// standard input is a file, not a pipe): the sender must get the refusal
// with the reason, not an accept.
func TestPipeReceiverOpensBeforeAccept(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "not-a-pipe"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sock := fmt.Sprintf("@wpg-test-open-first-%d-%d", os.Getpid(), time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Receive(ctx, RecvSpec{Listen: sock}, Env{Stdin: f})
		done <- err
	}()
	c, err := peer.Dial(ctx, sock, 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := peer.WriteRequest(c, peer.RecvRequest{Backend: "pipe", PID: os.Getpid(), MaxFrame: 4096}); err != nil {
		t.Fatal(err)
	}
	a, err := peer.ReadAccept(c)
	if err != nil {
		t.Fatalf("reading the accept: %v", err)
	}
	if !strings.Contains(a.Error, "standard input is not a pipe") {
		t.Errorf("the sender got %+v; want a refusal saying standard input is not a pipe", a)
	}
	if err := <-done; err == nil || !strings.Contains(err.Error(), "standard input is not a pipe") {
		t.Errorf("Receive = %v; want the open's error", err)
	}
}
