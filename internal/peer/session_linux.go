//go:build linux

package peer

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/shmring"
)

// childWait is how long Close waits for a receiver child's report.
const childWait = 30 * time.Second

// Session is a local sender's hold on its receiver, the part the local
// paths (shm, cma, xpmem, unix, pipe) share: the receiver child it started
// (none when it connected to a listening one), the rendezvous connection
// and the hello exchange over it, the failure path that leaves nothing
// running, the receiver's details for Info, and the wait for the child's
// report on Close. A sender embeds it; the promoted PeerReport makes the
// sender a backend.PeerReporter.
type Session struct {
	Name    string          // backend name, for errors
	Conn    *net.UnixConn   // the rendezvous connection (nil for a pipe)
	Child   *Process        // the receiver the sender started; nil when it connected to one
	Where   string          // the receiver for messages: "receiver process PID", the socket path, …
	PeerPID int             // the receiver's pid from its hello (0 until then)
	Gone    <-chan struct{} // closed once the receiver hangs up (see Watch)
	report  []byte
}

// Reach connects the sender of backend name to its receiver as o.Peer says:
// it starts one (`wpg recv --backend name --listen @…` through
// o.Env.Launcher, with childArgs and the --verify mode) and dials it, or
// dials the `wpg recv --listen` socket o.Peer.Sock; wait bounds the dial.
// On an error nothing is left running.
func (s *Session) Reach(ctx context.Context, name string, o backend.Options, wait time.Duration, childArgs ...string) error {
	s.Name = name
	switch o.Peer.Mode {
	case backend.PeerConnect:
		c, err := Dial(ctx, o.Peer.Sock, wait, nil)
		if err != nil {
			return fmt.Errorf("%s sender: %w", name, err)
		}
		s.Conn, s.Where = c, o.Peer.Sock
		return nil
	case backend.PeerOwn:
	default:
		return fmt.Errorf("%s sender: the receiver must be reached over a socket (%s is for the pipe path): leave --connect out to let wpg start one, or give --connect SOCK", name, o.Peer)
	}
	if err := s.Start(name, o, true, nil, childArgs...); err != nil {
		return err
	}
	c, err := Dial(ctx, s.Child.Sock, wait, s.Child.Exited)
	if err != nil {
		s.Abort()
		return fmt.Errorf("%s sender: %w", name, err)
	}
	s.Conn = c
	return nil
}

// Start starts the receiver child of backend name (o.Env.Launcher, its
// stderr to o.Env.Stderr) with args and the --verify mode; with listen it
// listens on an abstract socket (Process.Sock), and stdin, when not nil,
// becomes its standard input.
func (s *Session) Start(name string, o backend.Options, listen bool, stdin *os.File, args ...string) error {
	s.Name = name
	p, err := StartWith(o.Env.Launcher, o.Env.Stderr, name, listen, stdin, append(args, VerifyArgs(o.Verify)...)...)
	if err != nil {
		return fmt.Errorf("%s sender: %w", name, err)
	}
	s.Child, s.Where = p, fmt.Sprintf("receiver process %d", p.PID())
	return nil
}

// Exchange sends h, with fds attached, and reads the receiver's hello
// within wait, recording its pid. On an error it aborts the session (see
// Abort) and returns the error naming the receiver.
func (s *Session) Exchange(h Hello, wait time.Duration, fds ...int) (Hello, error) {
	if h.Backend == "" {
		h.Backend = s.Name
	}
	if h.PID == 0 {
		h.PID = os.Getpid()
	}
	if err := Send(s.Conn, h, fds...); err != nil {
		s.Abort()
		return Hello{}, fmt.Errorf("%s sender (%s): %w", s.Name, s.Where, err)
	}
	rh, _, err := Recv(s.Conn, wait)
	if err != nil {
		s.Abort()
		return Hello{}, fmt.Errorf("%s sender (%s): %w", s.Name, s.Where, err)
	}
	s.PeerPID = rh.PID
	return rh, nil
}

// Watch starts watching the connection once the hellos are over: Gone is
// closed when the receiver hangs up or dies.
func (s *Session) Watch() { s.Gone = Watch(s.Conn) }

// Abort is the failure path of a sender that did not get going: it closes
// the connection and kills a child it started.
func (s *Session) Abort() {
	if s.Conn != nil {
		s.Conn.Close()
	}
	if s.Child != nil {
		s.Child.Kill()
	}
}

// GoneError is the error to stop with once the receiver has gone (see the
// function GoneError), nil while it is there.
func (s *Session) GoneError(prod *shmring.Producer, sent uint64, taken string) error {
	return GoneError(s.Name, s.PeerPID, s.Gone, prod, sent, taken)
}

// Hangup ends a ring-fed sender's side: it closes the producer side of the
// ring (the receiver drains what is left and stops), waits for the report
// of a child it started, and closes the connection.
func (s *Session) Hangup(prod *shmring.Producer) error {
	prod.Close()
	err := s.Wait()
	s.Conn.Close()
	return err
}

// Wait waits up to 30 s for the report of a child the sender started (the
// sender has closed its end of the data path); without a child it returns
// nil at once.
func (s *Session) Wait() error {
	if s.Child == nil {
		return nil
	}
	var err error
	s.report, err = s.Child.Wait(childWait)
	return err
}

// Details adds the receiver's facts ("peer", "peer_pid") to d and returns d.
func (s *Session) Details(d map[string]string) map[string]string {
	d["peer"] = s.Where
	d["peer_pid"] = strconv.Itoa(s.PeerPID)
	return d
}

// PeerReport is the final JSON report of a receiver child the sender
// started, after Close (nil when it connected to a listening receiver).
func (s *Session) PeerReport() []byte { return s.report }
