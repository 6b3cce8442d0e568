//go:build linux

package peer

import (
	"context"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/shmring"
)

// HelloWait bounds each step of a local path's meeting: the dial of the
// data connection and the hello each side waits for.
const HelloWait = 10 * time.Second

// WaitSlice is how long one wait for ring space lasts before a ring-fed
// sender asks again whether its receiver is still there.
const WaitSlice = 20 * time.Millisecond

// RingSender is the skeleton of a sender that feeds its receiver through
// a shmring (shm's ring of frame slots; the descriptor ring of cma, xpmem
// and udmabuf): the Session, the ring and its producer, the frames
// committed, and what follows from them: Open, PeerGone, Flush and Close.
// A sender embeds it and adds Reserve, Commit, MaxFrame and Info.
type RingSender struct {
	Session
	Ring   *shmring.Ring
	Prod   *shmring.Producer // set by Open
	Frames uint64            // committed frames (the sender counts them)
	// Release, when set, frees the sender's own resources (staging
	// memory, an exported segment) after the hang-up on Close, or on
	// Discard; its error is Close's when the hang-up had none.
	Release func() error

	ctx    context.Context
	taken  string
	closed bool
}

// Open reaches the receiver of backend name as o.Peer says, asking it q
// (Session.Reach), sends it hello h with the ring's memfd and then fds,
// reads its hello, and starts the producer and the watch on the receiver.
// ctx is the instance's (Flush gives up on a stalled receiver once it is
// done); taken words the receiver's share of the frames in PeerGone's
// error ("were taken"). On an error the session has left nothing running
// and the ring and Release are the caller's to free (Discard).
func (s *RingSender) Open(ctx context.Context, name string, o backend.Options, q RecvRequest, h Hello, taken string, fds ...int) (Hello, error) {
	s.ctx, s.taken = ctx, taken
	if err := s.Reach(ctx, name, o, HelloWait, q); err != nil {
		return Hello{}, err
	}
	rh, err := s.Exchange(h, HelloWait, append([]int{s.Ring.Fd()}, fds...)...)
	if err != nil {
		return Hello{}, err
	}
	s.Prod = s.Ring.Producer()
	s.Watch()
	return rh, nil
}

// PeerGone is the error to stop with once the receiver has gone (see
// GoneError), nil while it is there.
func (s *RingSender) PeerGone() error { return s.GoneError(s.Prod, s.Frames, s.taken) }

// Flush waits until the receiver has consumed every committed frame.
func (s *RingSender) Flush() error { return Drain(s.ctx, s.Name, s.Prod, WaitSlice, s.PeerGone) }

// Close ends the sender once: the hang-up (the receiver drains the ring
// and stops; a receiver child's report is awaited), then Release, then
// the ring. It returns the first error.
func (s *RingSender) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.Hangup(s.Prod)
	if s.Release != nil {
		if rerr := s.Release(); err == nil {
			err = rerr
		}
	}
	if cerr := s.Ring.Close(); err == nil {
		err = cerr
	}
	return err
}

// Discard frees Release's resources and the ring of a sender that did not
// get going (its session is gone or was never there); Close then does
// nothing.
func (s *RingSender) Discard() {
	if s.closed {
		return
	}
	s.closed = true
	if s.Release != nil {
		_ = s.Release()
	}
	_ = s.Ring.Close()
}

// RingReceiver is the skeleton of the receiving side of a ring-fed path
// (shm, cma, xpmem, udmabuf): the meeting's connection, the ring and its
// consumer, the sender's pid and the watch on it, the frames received,
// and the Info it keeps once closed. A receiver embeds it and adds Next
// (with NextOrGone) and Info (starting with Last).
type RingReceiver struct {
	Name   string
	Conn   *net.UnixConn
	Ring   *shmring.Ring
	Cons   *shmring.Consumer // set by Answer
	Gone   <-chan struct{}   // closed once the sender has gone (set by Answer)
	PID    int               // the sender's
	Frames uint64            // received frames (the receiver counts them)
	// Release, when set, frees the receiver's own resources on Close
	// (after the consumer's end, before the ring and the connection).
	Release func() error

	last   backend.Info
	closed bool
}

// Meet accepts the sender of backend name (Meet) and fills in Name, Conn
// and PID; the Meeting carries the sender's hello and the descriptors it
// passed.
func (r *RingReceiver) Meet(ctx context.Context, name string, o backend.Options) (*Meeting, error) {
	m, err := Meet(ctx, name, o, HelloWait)
	if err != nil {
		return nil, err
	}
	r.Name, r.Conn, r.PID = name, m.Conn, m.Hello.PID
	return m, nil
}

// OpenRing maps the ring of the meeting's first descriptor, which it owns
// from then on, also when the mapping fails.
func (r *RingReceiver) OpenRing(m *Meeting) error {
	ring, err := shmring.Open(m.Fds[0])
	m.Fds = m.Fds[1:]
	if err != nil {
		return err
	}
	r.Ring = ring
	return nil
}

// Answer sends the receiver's hello h (backend and pid filled in) and
// starts the consumer and the watch on the sender. On an error it closes
// everything (as Close) and returns the error naming the receiver.
func (r *RingReceiver) Answer(h Hello) error {
	h.Backend, h.PID = r.Name, os.Getpid()
	if err := Send(r.Conn, h); err != nil {
		r.closeAll()
		return backend.ErrorfAt(r.Name, "receiver", "%w", err)
	}
	r.Cons = r.Ring.Consumer()
	r.Gone = Watch(r.Conn)
	return nil
}

// Details adds what every ring-fed receiver reports, "frames" and
// "peer_pid", to d and returns d.
func (r *RingReceiver) Details(d map[string]string) map[string]string {
	d["frames"] = strconv.FormatUint(r.Frames, 10)
	d["peer_pid"] = strconv.Itoa(r.PID)
	return d
}

// Last returns the Info kept by Close, and whether the receiver is closed:
// a receiver's Info returns it then instead of reading the ring.
func (r *RingReceiver) Last() (backend.Info, bool) { return r.last, r.closed }

// CloseWith closes the receiver once, keeping info (the receiver's Info
// just before) for Last: the consumer's end of the ring, Release, the
// ring and the connection. It returns Release's or the ring's error.
func (r *RingReceiver) CloseWith(info backend.Info) error {
	if r.closed {
		return nil
	}
	r.last = info
	if r.Cons != nil {
		r.Cons.Close()
	}
	return r.closeAll()
}

func (r *RingReceiver) closeAll() error {
	r.closed = true
	var err error
	if r.Release != nil {
		err = r.Release()
	}
	if cerr := r.Ring.Close(); err == nil {
		err = cerr
	}
	r.Conn.Close()
	return err
}
