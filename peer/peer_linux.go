//go:build linux

package peer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/syncbuf"
	"github.com/wpg-dev/wpg/internal/sys"
)

// Hello is the message each side sends once after connecting. Fields a
// backend does not use stay zero.
type Hello struct {
	Backend  string `json:"backend"`
	PID      int    `json:"pid"`
	MaxFrame int    `json:"max_frame,omitempty"`
	Slots    int    `json:"slots,omitempty"`
	// Addr and Len name a buffer in the sender (cma: where the receiver
	// reads with process_vm_readv).
	Addr uint64 `json:"addr,omitempty"`
	Len  int    `json:"len,omitempty"`
	// Mode is the transfer mode the sender chose (cma: "readv"/"writev").
	Mode  string `json:"mode,omitempty"`
	Error string `json:"error,omitempty"`
}

// A Launcher builds (does not start) the child process that receives on
// a rendezvous socket: backend.Launcher, which a job passes in
// backend.Options.Env (job.Env's launcher) and Session hands to StartWith;
// DefaultLauncher runs this executable as `wpg recv --listen SOCK`.
type Launcher = backend.Launcher

// DefaultLauncher re-executes this executable as `wpg recv --listen SOCK`:
// the child learns everything else from the sender's RecvRequest.
func DefaultLauncher(sock string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("start receiver: locate the wpg binary: %w", err)
	}
	return exec.Command(exe, "recv", "--listen", sock), nil
}

// Process is a receiver child started by the sender.
type Process struct {
	cmd    *exec.Cmd
	errBuf *syncbuf.Buffer // the last 4 KiB of the child's stderr
	Sock   string          // rendezvous socket: an abstract name ("@…")
	done   chan struct{}
	werr   error
}

// StartWith starts a receiver child for backend, built by launch (nil:
// DefaultLauncher), listening on @wpg-BACKEND-PID-RANDOM, a socket in the
// abstract namespace: nothing on disk, so a sender killed with SIGKILL
// leaves nothing behind (Accept takes only a peer of our own user on such
// a socket). stdin, when not nil, becomes the child's standard input (the
// pipe's read end). The child's stderr goes to stderr (nil: nowhere), and
// its tail is kept for errors; its standard output is discarded (its
// result comes back in the protocol's answer).
func StartWith(launch Launcher, stderr io.Writer, backend string, stdin *os.File) (*Process, error) {
	if launch == nil {
		launch = DefaultLauncher
	}
	p := &Process{done: make(chan struct{})}
	p.Sock = fmt.Sprintf("@wpg-%s-%d-%016x", backend, os.Getpid(), rand.Uint64())
	cmd, err := launch(p.Sock)
	if err != nil {
		return nil, err
	}
	cmd.Stdout = nil
	p.errBuf = &syncbuf.Buffer{Max: 4096, Tail: true, Pass: stderr}
	cmd.Stderr = p.errBuf
	if stdin != nil {
		cmd.Stdin = stdin
	}
	// The child dies with us if we are killed, and lives in a process group
	// of its own: Ctrl-C on the terminal signals our group, and we stop the
	// run and then the child in order (it would otherwise die mid-run and
	// the stopped run would end in "the receiver has gone").
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start receiver %s: %w", strings.Join(cmd.Args, " "), err)
	}
	p.cmd = cmd
	go func() {
		p.werr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// PID returns the child's process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited returns a non-nil error once the child has exited.
func (p *Process) Exited() error {
	select {
	case <-p.done:
		return p.exitErr()
	default:
		return nil
	}
}

func (p *Process) exitErr() error {
	msg := strings.TrimSpace(p.errBuf.String())
	if msg != "" {
		msg = ": " + msg
	}
	if p.werr != nil {
		return fmt.Errorf("receiver process %d exited (%v)%s", p.cmd.Process.Pid, p.werr, msg)
	}
	return fmt.Errorf("receiver process %d exited%s", p.cmd.Process.Pid, msg)
}

// Wait waits up to timeout for the child to exit (killing it after that).
// With answered (its result came over the control connection) an exit
// status other than 0 is no error: a receiver that found loss or
// corruption exits non-zero but still reports.
func (p *Process) Wait(timeout time.Duration, answered bool) error {
	var err error
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(2 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
		err = fmt.Errorf("receiver process %d did not finish within %v after the sender closed", p.cmd.Process.Pid, timeout)
	}
	if err == nil && p.werr != nil {
		var ee *exec.ExitError
		if !errors.As(p.werr, &ee) || !answered {
			err = p.exitErr()
		}
	}
	return err
}

// Kill stops the child at once (used when the sender fails to start).
func (p *Process) Kill() {
	if p.cmd != nil && p.cmd.Process != nil {
		p.cmd.Process.Kill()
		<-p.done
	}
}

// Dial connects to the receiver listening on path, retrying until timeout
// while the socket does not exist yet; alive, when not nil, is checked
// between attempts (a child that exited ends the wait with its error).
func Dial(ctx context.Context, path string, timeout time.Duration, alive func() error) (*net.UnixConn, error) {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
		if err == nil {
			return c, nil
		}
		if alive != nil {
			if aerr := alive(); aerr != nil {
				return nil, aerr
			}
		}
		retry := errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED)
		if !retry || time.Now().After(deadline) {
			return nil, fmt.Errorf("connect to receiver at %s: %w (start `wpg recv --listen %s` first, or drop --connect to let wpg start one)", path, err, path)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("stopped while waiting for the receiver at %s to listen (%v): %w", path, err, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Accept listens on path, accepts one sender and removes the socket file.
// It honours ctx while waiting. A path starting with "@" is a name in the
// abstract namespace (no file; what Start uses): anyone in the network
// namespace may connect to it, so only a peer of our own user is taken.
func Accept(ctx context.Context, path string) (*net.UnixConn, error) {
	l, err := listen(path)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	return acceptOn(ctx, l, path)
}

// Send writes h as one message with fds attached.
func Send(c *net.UnixConn, h Hello, fds ...int) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return sys.SendFds(c, b, fds...)
}

// Recv reads one hello and the descriptors that came with it, waiting at
// most timeout. A hello carrying Error is returned as an error.
func Recv(c *net.UnixConn, timeout time.Duration) (Hello, []int, error) {
	var h Hello
	c.SetReadDeadline(time.Now().Add(timeout))
	defer c.SetReadDeadline(time.Time{})
	buf := make([]byte, 4096)
	n, fds, err := sys.RecvFds(c, buf)
	if err != nil {
		return h, nil, fmt.Errorf("peer hello: %w", err)
	}
	if err := json.Unmarshal(buf[:n], &h); err != nil {
		for _, fd := range fds {
			sys.CloseFd(fd)
		}
		return h, nil, fmt.Errorf("peer hello: not a wpg peer (%v)", err)
	}
	if h.Error != "" {
		for _, fd := range fds {
			sys.CloseFd(fd)
		}
		return h, nil, fmt.Errorf("peer: %s", h.Error)
	}
	return h, fds, nil
}

// Watch returns a channel closed when the peer closes c or dies (a read
// returns EOF or an error). It reads and discards anything else, so only
// use it once the hello exchange is over.
func Watch(c *net.UnixConn) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		var b [64]byte
		for {
			if _, err := c.Read(b[:]); err != nil {
				close(ch)
				return
			}
		}
	}()
	return ch
}
