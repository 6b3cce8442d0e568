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
	"github.com/wpg-dev/wpg/internal/wire"
	"github.com/wpg-dev/wpg/shmring"
)

// childWait is how long Close waits for a receiver child's report.
const childWait = 30 * time.Second

// Session is a local sender's hold on its receiver, the part the local
// paths (shm, cma, xpmem, unix, pipe) share: the receiver child it started
// (none when it connected to a listening one), the peer protocol's control
// connection (request, accept, answer), the data connection and the hello
// exchange over it, the failure path that leaves nothing running, the
// receiver's details for Info, and the wait for the child's answer on
// Close. A sender embeds it; the promoted PeerReport makes the sender a
// backend.PeerReporter.
type Session struct {
	Name    string          // backend name, for errors
	Ctrl    *net.UnixConn   // the control connection (RecvRequest … RecvAnswer)
	Conn    *net.UnixConn   // the data connection of the hellos (nil for a pipe)
	Child   *Process        // the receiver the sender started; nil when it connected to one
	Where   string          // the receiver for messages: "receiver process PID", the socket path, …
	PeerPID int             // the receiver's pid from its hello (0 until then)
	Gone    <-chan struct{} // closed once the receiver hangs up (see Watch)
	report  []byte

	// With a Live in the Open context: the receiver's progress goes to
	// live, and a reader goroutine takes every message of the control
	// connection, handing the answer (or why none came) to answers.
	live    *Live
	answers chan answerOrErr
}

// answerOrErr is what the control connection's reader ended with.
type answerOrErr struct {
	a   RecvAnswer
	err error
}

// Request fills in what every sender asks of its receiver: the backend
// name, the sender's pid, the --verify mode and the receive batch.
func Request(name string, o backend.Options, q RecvRequest) RecvRequest {
	q.Backend, q.PID, q.Verify = name, os.Getpid(), o.Verify
	if q.Batch == 0 {
		q.Batch = childBatch
	}
	return q
}

// childBatch is the receive batch a sender asks of its receiver.
const childBatch = 256

// Reach connects the sender of backend name to its receiver as o.Peer says:
// it starts one (`wpg recv --listen @…` through o.Env.Launcher, see
// Start) or uses the `wpg recv --listen` socket o.Peer.Sock, sends it the
// request q (see Request) on a control connection, and dials the data
// connection; wait bounds each dial. On an error nothing is left running.
func (s *Session) Reach(ctx context.Context, name string, o backend.Options, wait time.Duration, q RecvRequest) error {
	s.Name = name
	sock := o.Peer.Sock
	var alive func() error
	switch o.Peer.Mode {
	case backend.PeerConnect:
		s.Where = sock
		if err := s.control(ctx, sock, wait, nil, Request(name, o, q)); err != nil {
			return err
		}
	case backend.PeerOwn:
		if err := s.Start(ctx, name, o, nil, q); err != nil {
			return err
		}
		sock, alive = s.Child.Sock, s.Child.Exited
	default:
		return backend.ErrorfAt(name, "sender", "the receiver must be reached over a socket (%s is for the pipe path): leave --connect out to let wpg start one, or give --connect SOCK", o.Peer)
	}
	c, err := Dial(ctx, sock, wait, alive)
	if err != nil {
		s.Abort()
		return backend.ErrorfAt(name, "sender", "%w", err)
	}
	s.Conn = c
	return nil
}

// control dials the control connection on sock and sends q; with a Live
// in ctx it asks for progress messages and starts reading them.
func (s *Session) control(ctx context.Context, sock string, wait time.Duration, alive func() error, q RecvRequest) error {
	c, err := Dial(ctx, sock, wait, alive)
	if err != nil {
		return backend.ErrorfAt(s.Name, "sender", "%w", err)
	}
	live := liveFrom(ctx)
	if live != nil {
		q.ProgressMs = int(live.every.Milliseconds())
	}
	if err := request(c, q, wait, s.Where); err != nil {
		c.Close()
		return backend.ErrorfAt(s.Name, "sender", "%w", err)
	}
	s.Ctrl = c
	if live != nil {
		s.live, s.answers = live, make(chan answerOrErr, 1)
		go s.readControl(live.join())
	}
	return nil
}

// readControl reads the control connection until the answer: progress
// messages go to s.live (slot c), the answer or the error that ended the
// reading to s.answers. A receiver of before progress messages sends
// the answer only.
func (s *Session) readControl(c *LiveCounts) {
	for {
		m, err := wire.ReadMessage(s.Ctrl, KindAnswer)
		if err != nil {
			s.answers <- answerOrErr{err: err}
			return
		}
		kind, err := wire.Kind(m)
		if err != nil {
			s.answers <- answerOrErr{err: fmt.Errorf("%s message: %w", KindAnswer, err)}
			return
		}
		if kind == KindProgress {
			var p RecvProgress
			if wire.Decode(m, KindProgress, ProtocolVersion, &p) == nil {
				s.live.update(c, p)
			}
			continue
		}
		var a RecvAnswer
		err = wire.Decode(m, KindAnswer, ProtocolVersion, &a)
		s.answers <- answerOrErr{a: a, err: err}
		return
	}
}

// readAnswer reads the receiver's answer within childWait: from the
// reader goroutine when there is one, else from the connection.
func (s *Session) readAnswer() (RecvAnswer, error) {
	s.Ctrl.SetReadDeadline(time.Now().Add(childWait))
	if s.answers == nil {
		return ReadAnswer(s.Ctrl)
	}
	r := <-s.answers // the deadline ends the reader's wait
	return r.a, r.err
}

// Start starts the receiver child of backend name (o.Env.Launcher, its
// stderr to o.Env.Stderr) listening on an abstract socket (Process.Sock),
// its standard input stdin when not nil (the pipe's read end), and sends
// it the request q (see Request) on the control connection. On an error
// nothing is left running.
func (s *Session) Start(ctx context.Context, name string, o backend.Options, stdin *os.File, q RecvRequest) error {
	s.Name = name
	p, err := StartWith(o.Env.Launcher, o.Env.Stderr, name, stdin)
	if err != nil {
		return backend.ErrorfAt(name, "sender", "%w", err)
	}
	s.Child, s.Where = p, fmt.Sprintf("receiver process %d", p.PID())
	if err := s.control(ctx, p.Sock, childDial, p.Exited, Request(name, o, q)); err != nil {
		s.Abort()
		return err
	}
	return nil
}

// childDial bounds the wait for a started child's socket.
const childDial = 10 * time.Second

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
		return Hello{}, backend.ErrorfAt(s.Name, "sender ("+s.Where+")", "%w", err)
	}
	rh, _, err := Recv(s.Conn, wait)
	if err != nil {
		s.Abort()
		return Hello{}, backend.ErrorfAt(s.Name, "sender ("+s.Where+")", "%w", err)
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
	if s.Ctrl != nil {
		s.Ctrl.Close()
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

// Wait waits up to 30 s for the answer of a child the sender started
// (the sender has closed its end of the data path), then for the child to
// exit, and closes the control connection; without a child (a receiver
// started independently prints its own report) it closes the control
// connection at once.
func (s *Session) Wait() error {
	if s.Ctrl == nil {
		if s.Child != nil {
			return s.Child.Wait(childWait, false)
		}
		return nil
	}
	defer s.Ctrl.Close()
	if s.Child == nil {
		return nil
	}
	a, aerr := s.readAnswer()
	answered := aerr == nil && len(a.Result) > 0
	if answered {
		s.report = a.Result
	}
	err := s.Child.Wait(childWait, answered)
	if err == nil && !answered {
		err = backend.ErrorfAt(s.Name, "sender", "the receiver's answer: %v", aerr)
		if a.Error != "" {
			err = backend.ErrorfAt(s.Name, "sender", "the receiver: %s", a.Error)
		}
	}
	return err
}

// Details adds the receiver's facts ("peer", "peer_pid") to d and returns d.
func (s *Session) Details(d map[string]string) map[string]string {
	d["peer"] = s.Where
	d["peer_pid"] = strconv.Itoa(s.PeerPID)
	return d
}

// PeerReport is the result of a receiver child the sender started, as its
// answer carried it (recv.Result.MarshalPeer; decode it with
// recv.UnmarshalPeer), after Close; nil when it connected to a listening
// receiver.
func (s *Session) PeerReport() []byte { return s.report }
