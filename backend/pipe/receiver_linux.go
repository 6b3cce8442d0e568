//go:build linux

package pipe

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/peer"
)

// errEmpty is returned by the receiver's read function when the pipe is
// empty but still has a writer.
var errEmpty = errors.New("pipe empty")

// receiver reads frames from a pipe or FIFO (see newReceiver).
type receiver struct {
	fd          int    // the pipe's read end, ours (own) or borrowed (stdin)
	own         sys.FD // fd when it is ours: a FIFO, a reopened stdin
	wasNonblock bool
	closed      bool
	where       string
	pipeSize    int
	warn        string
	sr          *peer.StreamReader
	ctx         context.Context
}

// newReceiver opens the pipe's reading side: the FIFO o.Pipe.FIFO, else
// o.Env.Stdin. ctx bounds the FIFO's open (which waits for a writer)
// only.
func newReceiver(ctx context.Context, o backend.Options) (backend.Receiver, error) {
	pipeSize := o.Pipe.Size
	r := &receiver{fd: -1, where: "stdin", ctx: ctx}
	if o.Pipe.FIFO != "" {
		fd, err := openFIFO(ctx, o.Pipe.FIFO)
		if err != nil {
			return nil, backend.ErrorfAt("pipe", "receiver", "%w", err)
		}
		r.fd, r.own, r.where = fd, sys.OwnFD(fd), "fifo "+o.Pipe.FIFO
	} else if o.Env.Stdin == nil {
		return nil, backend.ErrorfAt("pipe", "receiver", "no standard input to read from (backend.Env.Stdin is not set)")
	} else if r.fd = int(o.Env.Stdin.Fd()); !sys.IsPipe(r.fd) {
		return nil, backend.ErrorfAt("pipe", "receiver", "standard input is not a pipe: run `wpg send --backend pipe … | wpg recv --backend pipe`, or use --fifo PATH on both sides")
	}
	if pipeSize > 0 {
		var err error
		r.pipeSize, r.warn, err = Size(r.fd, pipeSize)
		if err != nil {
			r.own.Close()
			return nil, backend.ErrorfAt("pipe", fmt.Sprintf("receiver (%s)", r.where), "%w", err)
		}
	} else {
		r.pipeSize, _ = sys.PipeSize(r.fd)
	}
	// Non-blocking reads: a read that finds data (the common case while
	// a sender is busy) costs one system call; only an empty pipe costs a
	// poll as well. Standard input is shared with the rest of the
	// pipeline: it is reopened through /proc/self/fd so that the flag is
	// set on a file description of our own (see the sender's
	// setNonblock); where that fails the shared flag is set and restored
	// on Close.
	if !r.own.Valid() {
		if fd, err := sys.ReopenPipe(r.fd, false); err == nil {
			r.fd, r.own = fd, sys.OwnFD(fd)
		} else {
			r.warn = strings.TrimPrefix(r.warn+"; ", "; ") + fmt.Sprintf("cannot get a private descriptor (%v): O_NONBLOCK set on the shared %s until exit", err, r.where)
		}
	}
	fd := r.fd
	var err error
	if r.wasNonblock, err = sys.SetNonblock(fd, true); err != nil {
		r.Close()
		return nil, backend.ErrorfAt("pipe", fmt.Sprintf("receiver (%s)", r.where), "%w", err)
	}
	r.sr = peer.NewStreamReader(func(b []byte) (int, error) {
		n, err := sys.ReadRaw(fd, b)
		if sys.IsAgain(err) {
			return 0, errEmpty
		}
		return n, err
	})
	r.sr.Avail = func() int { n, _ := sys.PipeBytes(fd); return n }
	if o.MaxFrame > 0 {
		// --size (the payload or the whole frame): room for either, and
		// a header claiming more is a corrupted frame.
		if o.MaxFrame > peer.MaxFrameLen {
			r.Close()
			return nil, backend.ErrorfAt("pipe", "receiver", "--size %d: more than the largest frame (%d bytes: a %d-byte payload and its %d-byte header)", o.MaxFrame, peer.MaxFrameLen, frame.MaxPayload, frame.PayloadHeaderLen)
		}
		r.sr.Max = min(o.MaxFrame+frame.PayloadHeaderLen, peer.MaxFrameLen)
		if err := r.sr.Presize(r.sr.Max); err != nil {
			r.Close()
			return nil, backend.ErrorfAt("pipe", fmt.Sprintf("receiver (%s)", r.where), "%w", err)
		}
	}
	return r, nil
}

// Next returns the frames already buffered, or waits up to timeout for the
// pipe to become readable and reads once.
func (r *receiver) Next(views [][]byte, timeout time.Duration) (int, error) {
	return r.sr.NextOrWait(views, r.fd, timeout, spinWait, errEmpty, "pipe", "("+r.where+")")
}

func (r *receiver) Info() backend.Info {
	size, err := sys.PipeSize(r.fd)
	if err != nil {
		size = r.pipeSize
	}
	d := map[string]string{
		"path":      r.where,
		"pipe_size": strconv.Itoa(size),
		"reads":     strconv.FormatUint(r.sr.Reads, 10),
		"frames":    strconv.FormatUint(r.sr.Frames, 10),
	}
	if r.sr.Frames > 0 {
		d["reads_per_frame"] = strconv.FormatFloat(float64(r.sr.Reads)/float64(r.sr.Frames), 'f', 3, 64)
	}
	return backend.Info{Backend: "pipe", Mode: "read", Reason: r.warn, NUMANode: -1, Details: d}
}

func (r *receiver) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	if r.sr != nil {
		r.sr.Close()
	}
	if r.own.Valid() {
		return r.own.Close()
	}
	// Standard input is shared with whoever started us: put the flag back.
	if !r.wasNonblock {
		sys.SetNonblock(r.fd, false)
	}
	return nil
}

// openFIFO opens the FIFO at path for reading, which waits for a writer,
// until ctx ends: then it is its writer for a moment, so that the open
// returns, closes both and returns ctx's error (a blocked open(2) heeds
// no signal: Ctrl-C and --duration could not end a reader no sender
// came to).
func openFIFO(ctx context.Context, path string) (int, error) {
	type opened struct {
		fd  int
		err error
	}
	done := make(chan opened, 1)
	go func() {
		fd, err := sys.OpenFIFO(path, false)
		done <- opened{fd, err}
	}()
	select {
	case o := <-done:
		return o.fd, o.err
	case <-ctx.Done():
	}
	if w, err := sys.OpenFIFO(path, true); err == nil { // a reader waits: this does not
		fd := sys.OwnFD(w)
		fd.Close()
	}
	if o := <-done; o.err == nil {
		fd := sys.OwnFD(o.fd)
		fd.Close()
	}
	return -1, fmt.Errorf("waiting for a writer on FIFO %s: %w", path, ctx.Err())
}
