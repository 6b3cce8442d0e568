//go:build linux

package unix

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/peer"
	"github.com/wpg-dev/wpg/internal/sys"
)

func init() {
	backend.Register(backend.Registration{
		Name:        "unix",
		Kind:        backend.KindLocal,
		Summary:     "unix stream socket with enlarged buffers, the everyday baseline",
		NewSender:   newSender,
		NewReceiver: newReceiver,
		Payload:     true,
		NeedsPeer:   true,
	})
}

const (
	// spinWait is how long a side that finds the socket full (sender)
	// or empty (receiver) retries, yielding the CPU, before it sleeps in
	// poll(2).
	spinWait      = 200 * time.Microsecond
	sockBuf       = 4 << 20
	stagingBudget = 8 << 20
	groupBytes    = 256 << 10
	helloWait     = 10 * time.Second
)

type sender struct {
	conn *net.UnixConn
	fd   int // conn's descriptor, written with write(2) directly
	// spinStart is when the current wait for socket-buffer room began
	// (0: not waiting).
	spinStart int64
	child     *peer.Process
	peerPID   int
	where     string
	sndBuf    int
	mem       *sys.SharedMapping
	maxFrame  int
	perCall   int
	reserved  int
	writes    uint64
	frames    uint64
	report    []byte
	closed    bool
}

func newSender(ctx context.Context, o backend.Options) (backend.Sender, error) {
	if o.MaxFrame <= 0 {
		return nil, errors.New("unix: MaxFrame not set")
	}
	s := &sender{maxFrame: o.MaxFrame}
	var err error
	if s.conn, s.child, s.where, err = peer.Reach(ctx, "unix", o.Connect, o.Verify, helloWait); err != nil {
		return nil, fmt.Errorf("unix sender: %w", err)
	}
	fail := func(err error) (backend.Sender, error) {
		s.conn.Close()
		if s.child != nil {
			s.child.Kill()
		}
		return nil, fmt.Errorf("unix sender (%s): %w", s.where, err)
	}
	if s.sndBuf, _, err = sys.SetSocketBuffers(s.conn, sockBuf); err != nil {
		fmt.Fprintf(os.Stderr, "wpg: warning: unix sender: %v\n", err)
	}
	if err := peer.Send(s.conn, peer.Hello{Backend: "unix", PID: os.Getpid(), MaxFrame: o.MaxFrame}); err != nil {
		return fail(err)
	}
	h, _, err := peer.Recv(s.conn, helloWait)
	if err != nil {
		return fail(err)
	}
	s.peerPID = h.PID
	if s.fd, err = sys.ConnFd(s.conn); err != nil {
		return fail(err)
	}
	// At most half a socket buffer per Reserve, so that rendering
	// overlaps with the receiver draining.
	s.perCall = max(1, min(max(s.sndBuf, sockBuf)/4/s.maxFrame, stagingBudget/s.maxFrame, max(o.Batch, 1)))
	if s.mem, err = sys.MapAnon(s.perCall * s.maxFrame); err != nil {
		return fail(err)
	}
	return s, nil
}

func (s *sender) Reserve(bufs [][]byte) (int, error) {
	n := min(len(bufs), s.perCall)
	mem := s.mem.Bytes()
	for i := 0; i < n; i++ {
		bufs[i] = mem[i*s.maxFrame : (i+1)*s.maxFrame : (i+1)*s.maxFrame]
	}
	s.reserved = n
	return n, nil
}

func (s *sender) Commit(lens []int) (int, error) {
	n := min(len(lens), s.reserved)
	s.reserved = 0
	mem := s.mem.Bytes()
	done := 0
	for done < n {
		k, total := 0, 0
		for done+k < n && (k == 0 || total+lens[done+k] <= groupBytes) &&
			(k == 0 || lens[done+k-1] == s.maxFrame) {
			total += lens[done+k]
			k++
		}
		off := done * s.maxFrame
		w, err := s.write(mem[off : off+total])
		if err != nil {
			m := wholeFrames(lens[done:done+k], w)
			s.frames += uint64(m)
			if sys.IsConnReset(err) {
				return done + m, fmt.Errorf("unix: the receiver (%s, pid %d) has gone (%v)", s.where, s.peerPID, errors.Unwrap(err))
			}
			return done + m, fmt.Errorf("unix (%s): write: %w", s.where, err)
		}
		s.frames += uint64(k)
		done += k
	}
	return n, nil
}

// write writes b completely with write(2) calls on the socket's descriptor
// (non-blocking: a full socket buffer costs a poll(2) in this thread rather
// than a park in Go's network poller and a wake-up of the engine's locked
// thread) and returns the bytes written.
func (s *sender) write(b []byte) (int, error) {
	total := 0
	for len(b) > 0 {
		n, err := sys.Write(s.fd, b)
		if n > 0 {
			s.writes++
			s.spinStart = 0
			b = b[n:]
			total += n
			continue
		}
		if sys.IsEAGAIN(err) {
			// Retry while yielding for up to spinWait first: the socket
			// takes more as soon as the reader frees any of it, where
			// poll(2) reports POLLOUT only once three quarters of the
			// buffer have drained, and a sleeping thread's idle CPU is
			// slow to wake on a VM.
			if s.spinStart == 0 {
				s.spinStart = sys.MonotonicNs()
			}
			if sys.MonotonicNs()-s.spinStart < int64(spinWait) {
				sys.Yield()
				continue
			}
			if _, err := sys.PollOut(s.fd, -1); err != nil {
				return total, err
			}
			continue
		}
		if err == nil {
			err = io.ErrShortWrite
		}
		return total, err
	}
	return total, nil
}

func wholeFrames(lens []int, written int) int {
	for i, l := range lens {
		if written < l {
			return i
		}
		written -= l
	}
	return len(lens)
}

func (s *sender) MaxFrame() int { return s.maxFrame }

func (s *sender) Info() backend.Info {
	d := map[string]string{
		"peer":     s.where,
		"sndbuf":   strconv.Itoa(s.sndBuf),
		"writes":   strconv.FormatUint(s.writes, 10),
		"frames":   strconv.FormatUint(s.frames, 10),
		"peer_pid": strconv.Itoa(s.peerPID),
	}
	if s.frames > 0 {
		d["writes_per_frame"] = strconv.FormatFloat(float64(s.writes)/float64(s.frames), 'f', 3, 64)
	}
	return backend.Info{Backend: "unix", Mode: "stream", NUMANode: -1, Details: d}
}

func (s *sender) Flush() error { return nil }

func (s *sender) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.conn.Close()
	if s.child != nil {
		var werr error
		s.report, werr = s.child.Wait(30 * time.Second)
		if err == nil {
			err = werr
		}
	}
	if s.mem != nil {
		s.mem.Close()
	}
	return err
}

func (s *sender) PeerReport() []byte { return s.report }

type receiver struct {
	conn    *net.UnixConn
	fd      int // conn's descriptor, read with read(2) directly
	sr      *peer.StreamReader
	rcvBuf  int
	peerPID int
}

// errEmpty is returned by the receiver's read function when the socket has
// no data yet.
var errEmpty = errors.New("socket empty")

func newReceiver(ctx context.Context, o backend.Options) (backend.Receiver, error) {
	if o.Listen == "" {
		return nil, errors.New("unix receiver: needs --listen SOCK (the socket the sender connects to with --connect SOCK)")
	}
	conn, err := peer.Accept(ctx, o.Listen)
	if err != nil {
		return nil, fmt.Errorf("unix receiver: %w", err)
	}
	r := &receiver{conn: conn}
	if _, r.rcvBuf, err = sys.SetSocketBuffers(conn, sockBuf); err != nil {
		fmt.Fprintf(os.Stderr, "wpg: warning: unix receiver: %v\n", err)
	}
	h, _, err := peer.Recv(conn, helloWait)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("unix receiver: %w", err)
	}
	if h.Backend != "unix" {
		msg := fmt.Sprintf("the sender uses backend %q: start the receiver with --backend %s", h.Backend, h.Backend)
		peer.Send(conn, peer.Hello{Backend: "unix", PID: os.Getpid(), Error: msg})
		conn.Close()
		return nil, fmt.Errorf("unix receiver: %s", msg)
	}
	r.peerPID = h.PID
	if err := peer.Send(conn, peer.Hello{Backend: "unix", PID: os.Getpid()}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("unix receiver: %w", err)
	}
	fd, err := sys.ConnFd(conn)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("unix receiver: %w", err)
	}
	r.fd = fd
	// read(2) on the (non-blocking) descriptor directly: a read that
	// finds data costs one system call, an empty socket a poll(2) as well
	// (see Next), and nothing parks in Go's network poller.
	r.sr = peer.NewStreamReader(func(b []byte) (int, error) {
		n, err := sys.Read(fd, b)
		switch {
		case sys.IsEAGAIN(err):
			return 0, errEmpty
		case sys.IsConnReset(err):
			return 0, nil // the sender died: end of stream
		case err != nil:
			return 0, err
		}
		return n, nil
	})
	r.sr.Presize(h.MaxFrame)
	return r, nil
}

// Next returns the frames already buffered, or waits up to timeout for the
// socket to become readable and reads once.
func (r *receiver) Next(views [][]byte, timeout time.Duration) (int, error) {
	return r.sr.NextOrWait(views, r.fd, timeout, spinWait, errEmpty, "unix receiver")
}

func (r *receiver) Info() backend.Info {
	d := map[string]string{
		"rcvbuf":   strconv.Itoa(r.rcvBuf),
		"reads":    strconv.FormatUint(r.sr.Reads, 10),
		"frames":   strconv.FormatUint(r.sr.Frames, 10),
		"peer_pid": strconv.Itoa(r.peerPID),
	}
	if r.sr.Frames > 0 {
		d["reads_per_frame"] = strconv.FormatFloat(float64(r.sr.Reads)/float64(r.sr.Frames), 'f', 3, 64)
	}
	return backend.Info{Backend: "unix", Mode: "stream", NUMANode: -1, Details: d}
}

func (r *receiver) Close() error { return r.conn.Close() }
