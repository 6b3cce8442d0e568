//go:build linux

package pipe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/peer"
	"github.com/wpg-dev/wpg/internal/sys"
)

func init() {
	backend.Register(backend.Registration{
		Name:    "pipe",
		Kind:    backend.KindLocal,
		Summary: "a pipe or FIFO (stdout/stdin by default), enlarged to pipe-max-size; optional vmsplice",
		NewSender: func(ctx context.Context, o backend.Options) (backend.Sender, error) {
			return newSender(ctx, o, o.PipeSize)
		},
		NewReceiver: func(ctx context.Context, o backend.Options) (backend.Receiver, error) {
			return newReceiver(ctx, o, o.PipeSize)
		},
		Payload:   true,
		NeedsPeer: true,
		// One pipe carries one ordered stream of whole frames.
		SingleWorker: true,
		Flags:        []string{"fifo", "vmsplice", "pipe-size", "connect"},
	})
}

const (
	pageSize      = 4096
	stagingBudget = 8 << 20 // bytes of frames handed out per Reserve, at least one frame
	groupBytes    = 64 << 10
	wholeFrameMin = 64 << 10
	// spinWait is how long the receiver retries an empty pipe before it
	// sleeps in poll(2).
	spinWait = 200 * time.Microsecond
)

// sizePipe enlarges fd to want bytes (pipe-max-size when want is 0) and
// returns the capacity and a warning when the kernel gave less.
func sizePipe(fd, want int) (capacity int, warn string, err error) {
	if want <= 0 {
		max, err := sys.PipeMaxSize()
		if err != nil {
			max = 1 << 20
			warn = fmt.Sprintf("cannot read %s (%v); asking for 1 MiB", sys.PipeMaxSizePath, err)
		}
		want = max
	}
	got, err := sys.SetPipeSize(fd, want)
	for err != nil && want > pageSize {
		if !sys.IsPermission(err) {
			break
		}
		want /= 2
		got, err = sys.SetPipeSize(fd, want)
		warn = fmt.Sprintf("the kernel refused a larger pipe (EPERM: pipe-user-pages-soft in /proc/sys/fs exceeded, or above pipe-max-size without CAP_SYS_RESOURCE); using %d bytes", got)
	}
	if err != nil {
		cur, gerr := sys.PipeSize(fd)
		if gerr != nil {
			return 0, "", fmt.Errorf("size the pipe: %w", err)
		}
		return cur, fmt.Sprintf("cannot resize the pipe (%v); using its %d bytes", err, cur), nil
	}
	if got < want {
		warn = fmt.Sprintf("pipe is %d bytes, asked for %d", got, want)
	}
	return got, warn, nil
}

type sender struct {
	stall peer.Stall // gives up on a stalled reader once the run stops
	fd    int
	ownFd bool
	// wasNonblock: fd had O_NONBLOCK before we set it (restored on Close
	// when fd is not ours, e.g. stdout).
	wasNonblock bool
	where       string
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
	child       *peer.Process
	report      []byte
	closed      bool
}

func newSender(ctx context.Context, o backend.Options, pipeSize int) (backend.Sender, error) {
	if o.MaxFrame <= 0 {
		return nil, errors.New("pipe: MaxFrame not set")
	}
	s := &sender{fd: -1, maxFrame: o.MaxFrame, vmsplice: o.Vmsplice, stall: peer.Stall{Ctx: ctx}}
	var err error
	switch {
	case o.FIFO != "":
		s.where = "fifo " + o.FIFO
		s.fd, err = sys.OpenFIFO(o.FIFO, true)
		if err != nil {
			return nil, fmt.Errorf("pipe sender: %w", err)
		}
		s.ownFd = true
	case o.Connect == peer.AutoPeer || (o.Connect == "" && !sys.IsPipe(1)):
		r, w, err := sys.NewPipe()
		if err != nil {
			return nil, fmt.Errorf("pipe sender: %w", err)
		}
		s.fd, s.ownFd = w, true
		rf := os.NewFile(uintptr(r), "pipe-read")
		// --size lets the receiver size its buffer before the first frame.
		args := append(peer.VerifyArgs(o.Verify), "--size", strconv.Itoa(s.maxFrame))
		s.child, err = peer.Start("pipe", false, rf, args...)
		rf.Close()
		if err != nil {
			sys.CloseFd(w)
			return nil, fmt.Errorf("pipe sender: %w", err)
		}
		s.where = fmt.Sprintf("pipe to receiver process %d", s.child.PID())
	case o.Connect == "" || o.Connect == "-":
		s.fd, s.where = 1, "stdout"
		if !sys.IsPipe(1) {
			return nil, errors.New("pipe sender: standard output is not a pipe: pipe it into a reader (wpg send --backend pipe … | wpg recv --backend pipe), or use --fifo PATH")
		}
	default:
		return nil, fmt.Errorf("pipe sender: --connect %q: the pipe path has no rendezvous socket; use --fifo PATH, or pipe stdout into the reader", o.Connect)
	}
	s.pipeSize, s.warn, err = sizePipe(s.fd, pipeSize)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("pipe sender (%s): %w", s.where, err)
	}
	// Non-blocking writes, made with sys.WriteRaw/VmspliceRaw (see push).
	if err := s.setNonblock(); err != nil {
		s.Close()
		return nil, fmt.Errorf("pipe sender (%s): %w", s.where, err)
	}
	if s.warn != "" {
		fmt.Fprintf(os.Stderr, "wpg: warning: pipe (%s): %s\n", s.where, s.warn)
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
		return nil, fmt.Errorf("pipe sender: %w", err)
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
	if !s.ownFd {
		fd, err := sys.ReopenPipe(s.fd, true)
		if err == nil {
			s.fd, s.ownFd = fd, true
		} else {
			s.warn = strings.TrimPrefix(s.warn+"; ", "; ") + fmt.Sprintf("cannot get a private descriptor (%v): O_NONBLOCK set on the shared %s until exit", err, s.where)
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
				k = wholeFrames(lens[:n], written)
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
		k, total := 0, 0
		for done+k < n && (k == 0 || total+lens[done+k] <= groupBytes) &&
			(k == 0 || lens[done+k-1] == s.stride) {
			total += lens[done+k]
			k++
		}
		off := done * s.stride
		written, err := s.push(s.mem.Bytes()[off : off+total])
		if err != nil {
			w := wholeFrames(lens[done:done+k], written)
			s.frames += uint64(w)
			return done + w, err
		}
		s.frames += uint64(k)
		done += k
	}
	return n, nil
}

// wholeFrames is the number of frames of lens that lie completely within
// the first written bytes (a frame cut by a broken pipe is not counted).
func wholeFrames(lens []int, written int) int {
	for i, l := range lens {
		if written < l {
			return i
		}
		written -= l
	}
	return len(lens)
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
				return fmt.Errorf("pipe (%s): the reader has gone: %w", s.where, syscall.EPIPE)
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
	return fmt.Errorf("pipe (%s): the reader read nothing for %v after the run stopped: %d bytes left unsent", s.where, peer.StallGrace, left)
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
			return total, fmt.Errorf("pipe (%s): the reader has gone (EPIPE): %w", s.where, err)
		}
		return total, fmt.Errorf("pipe (%s): write: %w", s.where, err)
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
		"path":       s.where,
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
	if s.ownFd {
		err = sys.CloseFd(s.fd)
	} else if s.nonblock && !s.wasNonblock {
		// Standard output is shared with whoever started us: put the
		// flag back.
		sys.SetNonblock(s.fd, false)
	}
	if s.child != nil {
		rep, werr := s.child.Wait(30 * time.Second)
		s.report = rep
		if err == nil {
			err = werr
		}
	}
	// The staging pages may still be referenced by the pipe (vmsplice)
	// until the reader drained it; the reader has now exited or owns
	// the pipe, and unmapping only drops our mapping, not the pages.
	if s.mem != nil {
		s.mem.Close()
	}
	return err
}

func (s *sender) PeerReport() []byte { return s.report }

type receiver struct {
	fd          int
	ownFd       bool
	wasNonblock bool
	closed      bool
	where       string
	label       string // "pipe (where)", for errors
	pipeSize    int
	warn        string
	sr          *peer.StreamReader
	ctx         context.Context
}

func newReceiver(ctx context.Context, o backend.Options, pipeSize int) (backend.Receiver, error) {
	r := &receiver{fd: 0, where: "stdin", ctx: ctx}
	if o.FIFO != "" {
		fd, err := sys.OpenFIFO(o.FIFO, false)
		if err != nil {
			return nil, fmt.Errorf("pipe receiver: %w", err)
		}
		r.fd, r.ownFd, r.where = fd, true, "fifo "+o.FIFO
	} else if !sys.IsPipe(0) {
		return nil, errors.New("pipe receiver: standard input is not a pipe: run `wpg send --backend pipe … | wpg recv --backend pipe`, or use --fifo PATH on both sides")
	}
	r.label = "pipe (" + r.where + ")"
	if pipeSize > 0 {
		var err error
		r.pipeSize, r.warn, err = sizePipe(r.fd, pipeSize)
		if err != nil {
			return nil, fmt.Errorf("pipe receiver (%s): %w", r.where, err)
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
	if !r.ownFd {
		if fd, err := sys.ReopenPipe(r.fd, false); err == nil {
			r.fd, r.ownFd = fd, true
		} else {
			r.warn = strings.TrimPrefix(r.warn+"; ", "; ") + fmt.Sprintf("cannot get a private descriptor (%v): O_NONBLOCK set on the shared %s until exit", err, r.where)
		}
	}
	fd := r.fd
	var err error
	if r.wasNonblock, err = sys.SetNonblock(fd, true); err != nil {
		r.Close()
		return nil, fmt.Errorf("pipe receiver (%s): %w", r.where, err)
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
			return nil, fmt.Errorf("pipe receiver: --size %d: more than the largest frame (%d bytes: a %d-byte payload and its %d-byte header)", o.MaxFrame, peer.MaxFrameLen, frame.MaxPayload, frame.PayloadHeaderLen)
		}
		r.sr.Max = min(o.MaxFrame+frame.PayloadHeaderLen, peer.MaxFrameLen)
		if err := r.sr.Presize(r.sr.Max); err != nil {
			r.Close()
			return nil, fmt.Errorf("pipe receiver (%s): %w", r.where, err)
		}
	}
	return r, nil
}

// errEmpty is returned by the receiver's read function when the pipe is
// empty but still has a writer.
var errEmpty = errors.New("pipe empty")

// Next returns the frames already buffered, or waits up to timeout for the
// pipe to become readable and reads once.
func (r *receiver) Next(views [][]byte, timeout time.Duration) (int, error) {
	return r.sr.NextOrWait(views, r.fd, timeout, spinWait, errEmpty, r.label)
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
	if r.ownFd {
		return sys.CloseFd(r.fd)
	}
	// Standard input is shared with whoever started us: put the flag back.
	if !r.wasNonblock {
		sys.SetNonblock(r.fd, false)
	}
	return nil
}
