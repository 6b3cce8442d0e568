//go:build linux

package peer

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/wire"
	"github.com/wpg-dev/wpg/recv"
)

// The request, the accept and the answer go through the control
// connection typed and unchanged.
func TestControlRoundTrip(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "rx.sock")
	type got struct {
		c   *Control
		err error
	}
	ch := make(chan got, 1)
	go func() {
		c, err := AcceptRequest(context.Background(), sock)
		ch <- got{c, err}
	}()
	conn, err := Dial(context.Background(), sock, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	q := RecvRequest{Backend: "shm", PID: 7, MaxFrame: 4128, Verify: "sample", Expect: 9, RecvMode: "copy", BusyWait: true, Batch: 256}
	done := make(chan error, 1)
	go func() { done <- request(conn, q, 5*time.Second, sock) }()
	g := <-ch
	if g.err != nil {
		t.Fatal(g.err)
	}
	if g.c.Request != q {
		t.Fatalf("receiver got %+v; want %+v", g.c.Request, q)
	}
	if err := g.c.Accept(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	g.c.Answer(recv.Result{Schema: recv.Schema, Frames: 3, Lost: 1}, nil)
	g.c.Close()
	a, err := ReadAnswer(conn)
	if err != nil {
		t.Fatal(err)
	}
	r, err := recv.UnmarshalPeer(a.Result)
	if err != nil || r.Frames != 3 || r.Lost != 1 || a.Error != "" {
		t.Fatalf("answer %+v (%v): %+v", r, err, a)
	}
}

// A receiver refuses a request of another version or one that is not a
// request, and tells the sender why; a refusal reaches the sender as an
// error naming the receiver.
func TestControlRefusals(t *testing.T) {
	for _, c := range []struct {
		name string
		send func(*net.UnixConn) error
		want string
	}{
		{"unknown version", func(c *net.UnixConn) error {
			return wire.Write(c, KindRequest, ProtocolVersion+1, RecvRequest{Backend: "shm"})
		}, "version 2, this wpg speaks version 1"},
		{"not a request", func(c *net.UnixConn) error { return WriteAnswer(c, RecvAnswer{}) }, `got a "wpg.recv.answer" message`},
		{"oversized", func(c *net.UnixConn) error { _, err := c.Write([]byte{0xff, 0xff, 0xff, 0xff}); return err }, "more than the limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "rx.sock")
			ch := make(chan error, 1)
			go func() {
				_, err := AcceptRequest(context.Background(), sock)
				ch <- err
			}()
			conn, err := Dial(context.Background(), sock, 5*time.Second, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := c.send(conn); err != nil {
				t.Fatal(err)
			}
			if err := <-ch; err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("receiver: %v; want an error containing %q", err, c.want)
			}
			a, err := ReadAccept(conn)
			if err != nil || !strings.Contains(a.Error, c.want) {
				t.Fatalf("sender got %+v, %v; want a refusal containing %q", a, err, c.want)
			}
		})
	}
	// The sender's side of a refusal.
	sock := filepath.Join(t.TempDir(), "rx.sock")
	go func() {
		if c, err := AcceptRequest(context.Background(), sock); err == nil {
			c.Refuse(errString("the sender asks for backend cma, this receiver was started with backend shm"))
		}
	}()
	conn, err := Dial(context.Background(), sock, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = request(conn, RecvRequest{Backend: "cma"}, 5*time.Second, sock)
	if err == nil || !strings.Contains(err.Error(), "refused the request: the sender asks for backend cma, this receiver was started with backend shm") {
		t.Fatalf("request = %v; want the refusal naming both backends", err)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
