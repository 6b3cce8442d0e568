//go:build linux

package peer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/recv"
)

// requestWait bounds the wait for a request once a sender connected.
const requestWait = 10 * time.Second

// Control is the receiving side of the peer protocol's control connection
// (AcceptRequest): the listener, still open so that the backend's receiver
// accepts the sender's data connection on it (backend.Options.Rendezvous),
// the control connection and the sender's request.
type Control struct {
	Listener *net.UnixListener
	Conn     *net.UnixConn
	Request  RecvRequest
	path     string

	// The progress writer (Progress): messages wait in progress (one at
	// most) for the goroutine that writes them; wrote is closed when it
	// has stopped.
	progress chan RecvProgress
	wrote    chan struct{}
}

// AcceptRequest listens on path (`wpg recv --listen`), accepts the
// sender's control connection (only one of our own user on an abstract
// "@" name) and reads its RecvRequest. It honours ctx while waiting; on an
// error nothing is left open.
func AcceptRequest(ctx context.Context, path string) (*Control, error) {
	l, err := listen(path)
	if err != nil {
		return nil, err
	}
	c, err := acceptOn(ctx, l, path)
	if err != nil {
		l.Close()
		return nil, err
	}
	c.SetReadDeadline(time.Now().Add(requestWait))
	q, err := ReadRequest(c)
	c.SetReadDeadline(time.Time{})
	if err != nil {
		_ = WriteAccept(c, RecvAccept{PID: os.Getpid(), Error: err.Error()})
		c.Close()
		l.Close()
		return nil, fmt.Errorf("receiver on %s: %w", path, err)
	}
	return &Control{Listener: l, Conn: c, Request: q, path: path}, nil
}

// Accept tells the sender that its request is taken.
func (c *Control) Accept() error {
	if err := WriteAccept(c.Conn, RecvAccept{PID: os.Getpid()}); err != nil {
		c.Close()
		return fmt.Errorf("receiver on %s: %w", c.path, err)
	}
	return nil
}

// Refuse tells the sender why its request cannot be served, closes
// everything and returns err naming the socket.
func (c *Control) Refuse(err error) error {
	_ = WriteAccept(c.Conn, RecvAccept{PID: os.Getpid(), Error: err.Error()})
	c.Close()
	return fmt.Errorf("receiver on %s: %w", c.path, err)
}

// CloseListener stops listening (once the data connection is accepted).
func (c *Control) CloseListener() {
	if c.Listener != nil {
		c.Listener.Close()
		c.Listener = nil
	}
}

// ProgressEvery is the progress period the sender asked for
// (RecvRequest.ProgressMs, at least MinProgressMs), 0 when it asked for
// none: then Progress must not be called.
func (c *Control) ProgressEvery() time.Duration {
	if c.Request.ProgressMs <= 0 {
		return 0
	}
	return time.Duration(max(c.Request.ProgressMs, MinProgressMs)) * time.Millisecond
}

// progressWrite bounds the write of one progress message: a sender that
// reads nothing for that long gets no more of them.
const progressWrite = 5 * time.Second

// Progress hands the receive loop's progress p to the sender, from the
// loop itself: it encodes the window's latency and queues the message
// for a writer goroutine, dropping it when the previous one is still
// being written; it never waits on the socket. Calls must come from one
// goroutine, before Answer.
func (c *Control) Progress(p recv.Progress) {
	if c.ProgressEvery() == 0 {
		return
	}
	if c.progress == nil {
		c.progress, c.wrote = make(chan RecvProgress, 1), make(chan struct{})
		go c.writeProgress()
	}
	m := RecvProgress{ElapsedNs: p.Elapsed.Nanoseconds(), Frames: p.Frames, Bytes: p.Bytes, Lost: p.Lost,
		Duplicated: p.Duplicated, Corrupted: p.Corrupted, Unsigned: p.Unsigned, JitterNs: p.JitterNs}
	if b, err := p.MarshalLatency(); err == nil {
		m.Latency = b
	}
	select {
	case c.progress <- m:
	default: // the writer is behind: drop this one, the next carries the totals
	}
}

// writeProgress writes the queued progress messages until Answer closes
// the queue; after a failed write it writes no more.
func (c *Control) writeProgress() {
	defer close(c.wrote)
	failed := false
	for m := range c.progress {
		if failed {
			continue
		}
		c.Conn.SetWriteDeadline(time.Now().Add(progressWrite))
		if err := WriteProgress(c.Conn, m); err != nil {
			failed = true // the sender went, or reads nothing: its answer will not arrive either
		}
	}
	c.Conn.SetWriteDeadline(time.Time{})
}

// stopProgress ends the progress writer and waits for it, so that the
// answer follows the last progress message whole.
func (c *Control) stopProgress() {
	if c.progress != nil {
		close(c.progress)
		<-c.wrote
		c.progress = nil
	}
}

// Answer sends the receiver's result and the error that ended its
// reception, after the last progress message. A sender that connected to
// an independently started receiver does not wait for the answer, so a
// failed write is not an error.
func (c *Control) Answer(res recv.Result, rerr error) {
	c.stopProgress()
	var a RecvAnswer
	if b, err := res.MarshalPeer(); err == nil {
		a.Result = b
	} else {
		a.Error = err.Error()
	}
	if rerr != nil {
		a.Error = rerr.Error()
	}
	c.Conn.SetWriteDeadline(time.Now().Add(requestWait))
	_ = WriteAnswer(c.Conn, a)
}

// Close closes the control connection and the listener.
func (c *Control) Close() {
	c.stopProgress()
	c.CloseListener()
	c.Conn.Close()
}

// request sends q on the control connection c and reads the receiver's
// RecvAccept within wait; a refusal comes back as an error naming where.
func request(c *net.UnixConn, q RecvRequest, wait time.Duration, where string) error {
	c.SetDeadline(time.Now().Add(wait))
	defer c.SetDeadline(time.Time{})
	if err := WriteRequest(c, q); err != nil {
		return err
	}
	a, err := ReadAccept(c)
	if err != nil {
		return fmt.Errorf("%w (is %s a wpg receiver of this version?)", err, where)
	}
	if a.Error != "" {
		return fmt.Errorf("the receiver (%s) refused the request: %s", where, a.Error)
	}
	return nil
}

// listen listens on path, the socket file removed on close.
func listen(path string) (*net.UnixListener, error) {
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		fix := "choose another --listen path"
		switch {
		case errors.Is(err, syscall.EADDRINUSE):
			fix = "another receiver listens there, or a stale socket file is left: stop it or remove the file, or " + fix
		case errors.Is(err, syscall.ENOENT):
			fix = "its directory does not exist: create it, or " + fix
		case errors.Is(err, syscall.EACCES):
			fix = "no permission to create it there: " + fix
		}
		return nil, fmt.Errorf("listen on %s: %w (%s)", path, err, fix)
	}
	l.SetUnlinkOnClose(true)
	return l, nil
}

// acceptOn accepts one connection on l, honouring ctx; on an abstract
// name only a peer of our own user is taken.
func acceptOn(ctx context.Context, l *net.UnixListener, path string) (*net.UnixConn, error) {
	stop := context.AfterFunc(ctx, func() { l.SetDeadline(time.Now()) })
	defer stop()
	c, err := l.AcceptUnix()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("waiting for a sender on %s: %w", path, ctx.Err())
		}
		return nil, fmt.Errorf("accept on %s: %w", path, err)
	}
	l.SetDeadline(time.Time{})
	if !strings.HasPrefix(path, "@") {
		return c, nil
	}
	if uid, err := sys.PeerUID(c); err != nil || uid != os.Getuid() {
		c.Close()
		if err == nil {
			err = fmt.Errorf("user %d connected, not %d", uid, os.Getuid())
		}
		return nil, fmt.Errorf("accept on %s: refused a sender of another user: %w", path, err)
	}
	return c, nil
}
