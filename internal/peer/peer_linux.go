//go:build linux

package peer

import (
	"bytes"
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

// A Launcher builds (does not start) the child process that receives for
// backend with the given extra flags: backend.Launcher, which a job passes
// in backend.Options.Env (job.Env's launcher) and Session hands to
// StartWith; DefaultLauncher runs this executable as `wpg recv`.
type Launcher = backend.Launcher

// DefaultLauncher re-executes this executable as
// `wpg recv --backend BACKEND --json --batch 256 ARGS…`.
func DefaultLauncher(backend string, args []string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("start receiver: locate the wpg binary: %w", err)
	}
	full := append([]string{"recv", "--backend", backend, "--json", "--batch", "256"}, args...)
	return exec.Command(exe, full...), nil
}

// Process is a receiver child started by the sender.
type Process struct {
	cmd    *exec.Cmd
	out    bytes.Buffer
	errBuf *syncbuf.Buffer // the last 4 KiB of the child's stderr
	Sock   string          // rendezvous socket: an abstract name ("@…"; "" for a pipe child)
	done   chan struct{}
	werr   error
}

// VerifyArgs returns the receiver flags that carry the sender's --verify
// mode to a receiver child ("" = the receiver's default).
func VerifyArgs(verify string) []string {
	if verify == "" {
		return nil
	}
	return []string{"--verify", verify}
}

// StartWith starts a receiver child for backend, built by launch (nil:
// DefaultLauncher). With listen it passes `--listen
// @wpg-BACKEND-PID-RANDOM`, a socket in the abstract namespace: nothing on
// disk, so a sender killed with SIGKILL leaves nothing behind (Accept takes
// only a peer of our own user on such a socket). stdin, when not nil,
// becomes the child's standard input (the pipe's read end). The child's
// stderr goes to stderr (nil: nowhere), and its tail is kept for errors.
func StartWith(launch Launcher, stderr io.Writer, backend string, listen bool, stdin *os.File, args ...string) (*Process, error) {
	if launch == nil {
		launch = DefaultLauncher
	}
	p := &Process{done: make(chan struct{})}
	if listen {
		p.Sock = fmt.Sprintf("@wpg-%s-%d-%016x", backend, os.Getpid(), rand.Uint64())
		args = append([]string{"--listen", p.Sock}, args...)
	}
	cmd, err := launch(backend, args)
	if err != nil {
		return nil, err
	}
	cmd.Stdout = &p.out
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

// Wait waits up to timeout for the child to exit (killing it after that)
// and returns its standard output: the JSON report.
func (p *Process) Wait(timeout time.Duration) ([]byte, error) {
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
		// A receiver that found loss or corruption exits non-zero but
		// still reports; only a missing report is an error here.
		if !errors.As(p.werr, &ee) || p.out.Len() == 0 {
			err = p.exitErr()
		}
	}
	return bytes.TrimSpace(p.out.Bytes()), err
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
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Accept listens on path, accepts one sender and removes the socket file.
// It honours ctx while waiting. A path starting with "@" is a name in the
// abstract namespace (no file; what Start uses): anyone in the network
// namespace may connect to it, so only a peer of our own user is taken.
func Accept(ctx context.Context, path string) (*net.UnixConn, error) {
	c, err := accept(ctx, path)
	if err != nil || !strings.HasPrefix(path, "@") {
		return c, err
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

func accept(ctx context.Context, path string) (*net.UnixConn, error) {
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w (remove a stale socket file or choose another --listen path)", path, err)
	}
	l.SetUnlinkOnClose(true)
	defer l.Close()
	stop := context.AfterFunc(ctx, func() { l.SetDeadline(time.Now()) })
	defer stop()
	c, err := l.AcceptUnix()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("waiting for a sender on %s: %w", path, ctx.Err())
		}
		return nil, fmt.Errorf("accept on %s: %w", path, err)
	}
	return c, nil
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
