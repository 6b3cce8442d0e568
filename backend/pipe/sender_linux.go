//go:build linux

package pipe

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/peer"
)

// sender writes frames into a pipe or FIFO (see newSender).
type sender struct {
	peer.Session            // the receiver child, when the sender starts one
	stall        peer.Stall // gives up on a stalled reader once the run stops
	fd           int        // the pipe's write end, ours (own) or borrowed (stdout)
	own          sys.FD     // fd when it is ours: a FIFO, a pipe, a reopened stdout
	// wasNonblock: fd had O_NONBLOCK before we set it (restored on Close
	// when fd is not ours, e.g. stdout).
	wasNonblock bool
	vmsplice    bool
	pipeSize    int
	warn        string
	maxFrame    int
	stride      int
	mem         *sys.SharedMapping
	slots       int // staging slots
	perCall     int // frames per Reserve
	perSlot     int // vmsplice: frames per staging slot
	delay       int // vmsplice: slots that must be queued after a slot before it is reused
	queued      uint64
	reserved    int
	writes      uint64
	frames      uint64
	roomWaits   uint64
	nonblock    bool // we set O_NONBLOCK on fd
	closed      bool
}

// newSender opens the pipe's writing side: the FIFO o.Pipe.FIFO, else as
// o.Peer says a pipe into a receiver child it starts (PeerOwn) or
// o.Env.Stdout (PeerStream).
func newSender(ctx context.Context, o backend.Options) (backend.Sender, error) {
	if err := o.NeedMaxFrame("pipe"); err != nil {
		return nil, err
	}
	s := &sender{fd: -1, maxFrame: o.MaxFrame, vmsplice: o.Pipe.Vmsplice, stall: peer.Stall{Ctx: ctx}}
	s.Name = "pipe"
	var err error
	switch {
	case o.Pipe.FIFO != "":
		s.Where = "fifo " + o.Pipe.FIFO
		s.fd, err = sys.OpenFIFO(o.Pipe.FIFO, true)
		if err != nil {
			return nil, backend.ErrorfAt("pipe", "sender", "%w", err)
		}
		s.own = sys.OwnFD(s.fd)
	case o.Peer.Mode == backend.PeerOwn:
		r, w, err := sys.NewPipe()
		if err != nil {
			return nil, backend.ErrorfAt("pipe", "sender", "%w", err)
		}
		s.fd, s.own = w, sys.OwnFD(w)
		rf := os.NewFile(uintptr(r), "pipe-read")
		// MaxFrame lets the receiver size its buffer before the first frame.
		err = s.Start(ctx, "pipe", o, rf, peer.RecvRequest{MaxFrame: s.maxFrame})
		rf.Close()
		if err != nil {
			s.own.Close()
			return nil, err
		}
		s.Where = fmt.Sprintf("pipe to receiver process %d", s.Child.PID())
	case o.Peer.Mode == backend.PeerStream:
		s.Where = "stdout"
		if o.Env.Stdout == nil {
			return nil, backend.ErrorfAt("pipe", "sender", "no standard output to write to (backend.Env.Stdout is not set)")
		}
		s.fd = int(o.Env.Stdout.Fd())
		if !sys.IsPipe(s.fd) {
			return nil, backend.ErrorfAt("pipe", "sender", "standard output is not a pipe: pipe it into a reader (wpg send --backend pipe … | wpg recv --backend pipe), or use --fifo PATH")
		}
	default:
		return nil, backend.ErrorfAt("pipe", "sender", "--connect %q: the pipe path has no rendezvous socket; use --fifo PATH, or pipe stdout into the reader", o.Peer.Sock)
	}
	s.pipeSize, s.warn, err = Size(s.fd, o.Pipe.Size)
	if err != nil {
		s.Close()
		return nil, backend.ErrorfAt("pipe", fmt.Sprintf("sender (%s)", s.Where), "%w", err)
	}
	// Non-blocking writes, made with sys.WriteRaw/VmspliceRaw (see push).
	if err := s.setNonblock(); err != nil {
		s.Close()
		return nil, backend.ErrorfAt("pipe", fmt.Sprintf("sender (%s)", s.Where), "%w", err)
	}
	s.stride = s.maxFrame
	// Hand out at most half a pipe of frames per Reserve, so that
	// rendering the next frames overlaps with the reader draining the
	// previous ones (a pipe holds only a few large frames).
	s.perCall = max(1, min(s.pipeSize/2/s.maxFrame, stagingBudget/s.maxFrame, max(o.Batch, 1)))
	s.slots = s.perCall
	if s.vmsplice {
		// A staging slot holds one large frame, or up to 64 KiB of small
		// frames that go into the pipe with one vmsplice; slots are page
		// aligned so that no page is shared by two slots.
		s.perSlot = max(1, min(groupBytes/s.maxFrame, max(o.Batch, 1)))
		s.perCall = s.perSlot
		s.stride = (s.perSlot*s.maxFrame + pageSize - 1) / pageSize * pageSize
		pagesPerSlot := s.stride / pageSize
		s.delay = (s.pipeSize/pageSize + pagesPerSlot - 1) / pagesPerSlot
		s.slots = s.delay + 1
	}
	s.mem, err = sys.Alloc(s.slots*s.stride, fmt.Sprintf("the staging slots (%d × %d bytes)", s.slots, s.stride))
	if err != nil {
		s.Close()
		return nil, backend.ErrorfAt("pipe", "sender", "%w", err)
	}
	return s, nil
}

// setNonblock makes the sender's writes non-blocking. A pipe we did not
// open (standard output) is shared with the rest of the pipeline through
// one file description, whose O_NONBLOCK a SIGKILL would leave set for the
// next writer: it is reopened through /proc/self/fd, a description of our
// own, and only where that fails is the shared flag set (and put back on
// Close).
func (s *sender) setNonblock() error {
	if !s.own.Valid() {
		fd, err := sys.ReopenPipe(s.fd, true)
		if err == nil {
			s.fd, s.own = fd, sys.OwnFD(fd)
		} else {
			s.warn = strings.TrimPrefix(s.warn+"; ", "; ") + fmt.Sprintf("cannot get a private descriptor (%v): O_NONBLOCK set on the shared %s until exit", err, s.Where)
		}
	}
	var err error
	if s.wasNonblock, err = sys.SetNonblock(s.fd, true); err != nil {
		return err
	}
	s.nonblock = true
	return nil
}

// slot returns staging slot i: one frame (write mode), or perSlot frames
// back to back (vmsplice mode).
func (s *sender) slot(i uint64) []byte {
	off := int(i%uint64(s.slots)) * s.stride
	n := s.maxFrame
	if s.vmsplice {
		n = s.perSlot * s.maxFrame
	}
	return s.mem.Bytes()[off : off+n : off+n]
}

func (s *sender) Reserve(bufs [][]byte) (int, error) {
	n := min(len(bufs), s.perCall)
	if s.vmsplice {
		// The frames of the next staging slot, which the reuse rule has
		// released: delay slots were queued since it was last spliced.
		sl := s.slot(s.queued)
		for i := 0; i < n; i++ {
			bufs[i] = sl[i*s.maxFrame : (i+1)*s.maxFrame : (i+1)*s.maxFrame]
		}
	} else {
		for i := 0; i < n; i++ {
			bufs[i] = s.slot(uint64(i))
		}
	}
	s.reserved = n
	return n, nil
}

func (s *sender) Commit(lens []int) (int, error) {
	n := min(len(lens), s.reserved)
	s.reserved = 0
	if s.vmsplice {
		sl := s.slot(s.queued)
		s.queued++ // the slot's pages are (being) handed to the pipe
		total, contiguous := 0, true
		for i := 0; i < n; i++ {
			if i < n-1 && lens[i] != s.maxFrame {
				contiguous = false
			}
			total += lens[i]
		}
		if contiguous {
			written, err := s.push(sl[:total])
			k := n
			if err != nil {
				k = peer.WholeFrames(lens[:n], written)
			}
			s.frames += uint64(k)
			return k, err
		}
		for i := 0; i < n; i++ {
			off := i * s.maxFrame
			if _, err := s.push(sl[off : off+lens[i]]); err != nil {
				return i, err
			}
			s.frames++
		}
		return n, nil
	}
	// Small frames go back to back, up to groupBytes per write(2); a large
	// frame goes in a write of its own, so that the pipe rarely holds a
	// partial frame and the reader gets one frame per read.
	done := 0
	for done < n {
		k, total := peer.WriteGroup(lens[done:n], s.stride, groupBytes)
		off := done * s.stride
		written, err := s.push(s.mem.Bytes()[off : off+total])
		if err != nil {
			w := peer.WholeFrames(lens[done:done+k], written)
			s.frames += uint64(w)
			return done + w, err
		}
		s.frames += uint64(k)
		done += k
	}
	return n, nil
}

// roomFor waits until the pipe has room for n more bytes, when a frame is
// large (wholeFrameMin or more) and fits the pipe: a write then never
// leaves a partial frame in the pipe, and a reader asking for one frame
// gets it in one read. The wait polls the queued byte count, yielding the
// CPU (up to 4096 times) and then sleeping in 10 µs steps (the writer would
// otherwise sleep inside write(2) at the same point).
func (s *sender) roomFor(n int) error {
	if n < wholeFrameMin || n > s.pipeSize {
		return nil
	}
	for i := 0; ; i++ {
		q, err := sys.PipeBytes(s.fd)
		if err != nil || s.pipeSize-q >= n {
			return nil
		}
		if i == 0 {
			s.roomWaits++
		}
		if i&255 == 255 {
			if !s.readerAlive() {
				return backend.ErrorfAt("pipe", fmt.Sprintf("(%s)", s.Where), "the reader has gone: %w", syscall.EPIPE)
			}
			if s.stall.Still(uint64(q)) {
				return s.stalled(n)
			}
		}
		// Yield (the reader is usually mid-read: room comes within tens
		// of microseconds, less than one sleep costs with the default
		// 50 µs timer slack), then sleep in short steps so that a writer
		// whose reader stalls does not spin.
		if i < 4096 {
			sys.Yield()
		} else {
			time.Sleep(10 * time.Microsecond)
		}
	}
}

// stalled is the error of a sender whose reader, still there, read nothing
// for peer.StallGrace after the run stopped.
func (s *sender) stalled(left int) error {
	return backend.ErrorfAt("pipe", fmt.Sprintf("(%s)", s.Where), "the reader read nothing for %v after the run stopped: %d bytes left unsent", peer.StallGrace, left)
}

// readerAlive reports whether the pipe still has a reader (poll says
// POLLERR on a write end without readers).
func (s *sender) readerAlive() bool { return !sys.PipeReaderGone(s.fd) }

// push writes b completely (write(2) or vmsplice(2) calls) and returns the
// bytes written. The calls are non-blocking and bypass the runtime's
// system-call bookkeeping (sys.WriteRaw): a 460,800-byte write copies for
// ~40 µs, long enough for sysmon to take the P away and wake another thread
// on every call. When the pipe is full (a frame larger than the pipe, or
// small frames) the writer sleeps in poll(2) until the reader frees a slot,
// as a blocking write would.
func (s *sender) push(b []byte) (int, error) {
	if err := s.roomFor(len(b)); err != nil {
		return 0, err
	}
	total := 0
	for len(b) > 0 {
		var n int
		var err error
		if s.vmsplice {
			n, err = sys.VmspliceRaw(s.fd, b)
		} else {
			n, err = sys.WriteRaw(s.fd, b)
		}
		if n > 0 {
			s.writes++
			b = b[n:]
			total += n
			continue
		}
		if sys.IsAgain(err) {
			if s.stall.Still(uint64(len(b))) {
				return total, s.stalled(len(b))
			}
			// Bounded, so that a stop is noticed while the reader
			// stalls.
			if _, err = sys.PollOut(s.fd, 100*time.Millisecond); err == nil {
				continue
			}
		}
		if err == nil {
			err = io.ErrShortWrite
		}
		if sys.IsEPIPE(err) {
			return total, backend.ErrorfAt("pipe", fmt.Sprintf("(%s)", s.Where), "the reader has gone (EPIPE): %w", err)
		}
		return total, backend.ErrorfAt("pipe", fmt.Sprintf("(%s)", s.Where), "write: %w", err)
	}
	return total, nil
}

func (s *sender) MaxFrame() int { return s.maxFrame }

func (s *sender) Info() backend.Info {
	mode := "write"
	if s.vmsplice {
		mode = "vmsplice"
	}
	d := map[string]string{
		"path":       s.Where,
		"pipe_size":  strconv.Itoa(s.pipeSize),
		"writes":     strconv.FormatUint(s.writes, 10),
		"frames":     strconv.FormatUint(s.frames, 10),
		"room_waits": strconv.FormatUint(s.roomWaits, 10),
	}
	if s.frames > 0 {
		d["writes_per_frame"] = strconv.FormatFloat(float64(s.writes)/float64(s.frames), 'f', 3, 64)
	}
	if s.vmsplice {
		d["staging_slots"] = strconv.Itoa(s.slots)
		d["frames_per_slot"] = strconv.Itoa(s.perSlot)
		d["reuse_after_slots"] = strconv.Itoa(s.delay)
	}
	return backend.Info{Backend: "pipe", Mode: mode, Reason: s.warn, NUMANode: -1, Details: d}
}

func (s *sender) Flush() error { return nil }

func (s *sender) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	var err error
	if s.own.Valid() {
		err = s.own.Close()
	} else if s.nonblock && !s.wasNonblock {
		// Standard output is shared with whoever started us: put the
		// flag back.
		sys.SetNonblock(s.fd, false)
	}
	if werr := s.Wait(); err == nil {
		err = werr
	}
	// The staging pages may still be referenced by the pipe (vmsplice)
	// until the reader drained it; the reader has now exited or owns
	// the pipe, and unmapping only drops our mapping, not the pages.
	if s.mem != nil {
		s.mem.Close()
	}
	return err
}
