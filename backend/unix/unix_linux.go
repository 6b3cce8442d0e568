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
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/peer"
)

// open opens the backend for one job: a sender per worker and a
// receiver, each from the options alone.
var open = backend.Factories{Sender: newSender, Receiver: newReceiver}.Open

const (
	// ioSlice is the longest a blocking read(2) or write(2) on the data
	// socket waits before it returns to Go code (SO_RCVTIMEO/SO_SNDTIMEO):
	// the calls bypass the runtime's system-call bookkeeping, so this is
	// also how long a stop-the-world can wait for this thread.
	ioSlice       = 5 * time.Millisecond
	sockBuf       = 4 << 20
	stagingBudget = 8 << 20
	groupBytes    = 256 << 10
)

type sender struct {
	peer.Session
	stall    peer.Stall // gives up on a stalled receiver once the run stops
	fd       sys.FD     // the data socket (see dataFd)
	sndBuf   int
	adjusted []string
	mem      *sys.Mapping
	staging  backend.Staging // in mem
	maxFrame int
	writes   uint64
	frames   uint64
	closed   bool
}

func newSender(ctx context.Context, o backend.Options) (backend.Sender, error) {
	if err := o.NeedMaxFrame("unix"); err != nil {
		return nil, err
	}
	s := &sender{maxFrame: o.MaxFrame, stall: peer.Stall{Ctx: ctx}}
	if err := s.Reach(ctx, "unix", o, peer.HelloWait, peer.RecvRequest{}); err != nil {
		return nil, err
	}
	var err error
	if s.sndBuf, _, err = sys.SetSocketBuffers(s.Conn, sockBuf); err != nil {
		s.adjusted = append(s.adjusted, "socket buffers not enlarged: "+err.Error())
	}
	if _, err := s.Exchange(peer.Hello{MaxFrame: o.MaxFrame}, peer.HelloWait); err != nil {
		return nil, err
	}
	fail := func(err error) (backend.Sender, error) {
		s.fd.Close()
		s.Abort()
		return nil, backend.ErrorfAt("unix", fmt.Sprintf("sender (%s)", s.Where), "%w", err)
	}
	if s.fd, err = dataFd(s.Conn); err != nil {
		return fail(err)
	}
	// At most half a socket buffer per Reserve, so that rendering
	// overlaps with the receiver draining.
	perCall := max(1, min(max(s.sndBuf, sockBuf)/4/s.maxFrame, stagingBudget/s.maxFrame, max(o.Batch, 1)))
	if s.mem, err = sys.AllocHuge(perCall*s.maxFrame, fmt.Sprintf("the staging buffer (%d × %d bytes)", perCall, s.maxFrame)); err != nil {
		return fail(err)
	}
	s.staging = backend.Staging{Mem: s.mem.Bytes(), MaxFrame: s.maxFrame, PerCall: perCall}
	return s, nil
}

func (s *sender) Reserve(bufs [][]byte) (int, error) { return s.staging.Reserve(bufs), nil }

func (s *sender) Commit(lens []int) (int, error) {
	n := s.staging.Take(lens)
	mem := s.mem.Bytes()
	done := 0
	for done < n {
		k, total := peer.WriteGroup(lens[done:n], s.maxFrame, groupBytes)
		off := done * s.maxFrame
		w, err := s.write(mem[off : off+total])
		if err != nil {
			m := peer.WholeFrames(lens[done:done+k], w)
			s.frames += uint64(m)
			if sys.IsConnReset(err) {
				return done + m, backend.Errorf("unix", "the receiver (%s, pid %d) has gone: %w", s.Where, s.PeerPID, err)
			}
			return done + m, backend.ErrorfAt("unix", fmt.Sprintf("(%s)", s.Where), "write: %w", err)
		}
		s.frames += uint64(k)
		done += k
	}
	return n, nil
}

// write writes b completely and returns the bytes written. Each write(2)
// blocks in the kernel, as the C reference's do, until the socket has taken
// all of b or ioSlice has passed; a full socket costs no system calls of
// its own.
func (s *sender) write(b []byte) (int, error) {
	total := 0
	for len(b) > 0 {
		n, err := sys.WriteRaw(s.fd.Int(), b)
		if n > 0 {
			s.writes++
			b = b[n:]
			total += n
			continue
		}
		if err == nil {
			err = io.ErrShortWrite
		}
		if !sys.IsAgain(err) {
			return total, err
		}
		if s.stall.Still(uint64(len(b))) {
			return total, fmt.Errorf("the receiver (%s) read nothing for %v after the run stopped: %d bytes of this write left unsent", s.Where, peer.StallGrace, len(b))
		}
	}
	return total, nil
}

// dataFd turns the rendezvous connection, after the hellos, into the data
// socket: a descriptor outside Go's network poller (sys.DetachFd), in
// blocking mode with ioSlice timeouts, read and written with
// sys.ReadRaw/WriteRaw. A side then waits for room or data asleep in its
// read(2) or write(2), woken by the kernel as soon as the other side has
// moved some, like the C reference's blocking calls: no poll(2), no
// spinning, no runtime thread woken on the side (measured at 460,800 B:
// 5.7 → 8.3 GB/s, 1.29 → 1.00 writes per frame).
func dataFd(c *net.UnixConn) (sys.FD, error) {
	raw, err := sys.DetachFd(c)
	if err != nil {
		return sys.FD{}, err
	}
	fd := sys.OwnFD(raw)
	if _, err := sys.SetNonblock(raw, false); err != nil {
		fd.Close()
		return sys.FD{}, err
	}
	if err := sys.SetSocketTimeouts(raw, ioSlice); err != nil {
		fd.Close()
		return sys.FD{}, err
	}
	return fd, nil
}

func (s *sender) MaxFrame() int { return s.maxFrame }

func (s *sender) Info() backend.Info {
	d := s.Details(map[string]string{
		"sndbuf": strconv.Itoa(s.sndBuf),
		"writes": strconv.FormatUint(s.writes, 10),
		"frames": strconv.FormatUint(s.frames, 10),
	})
	if s.frames > 0 {
		d["writes_per_frame"] = strconv.FormatFloat(float64(s.writes)/float64(s.frames), 'f', 3, 64)
	}
	return backend.Info{Backend: "unix", Mode: "stream", NUMANode: -1, Details: d, Adjusted: s.adjusted}
}

func (s *sender) Flush() error { return nil }

func (s *sender) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.fd.Close()
	if werr := s.Wait(); err == nil {
		err = werr
	}
	if s.mem != nil {
		s.mem.Close()
	}
	return err
}

type receiver struct {
	fd       sys.FD // the data socket (see dataFd)
	sr       *peer.StreamReader
	rcvBuf   int
	peerPID  int
	adjusted []string
	sum      bool // SumPayloads was called
}

// errEmpty is returned by the receiver's read function when the socket has
// no data yet.
var errEmpty = errors.New("socket empty")

func newReceiver(ctx context.Context, o backend.Options) (backend.Receiver, error) {
	m, err := peer.Meet(ctx, "unix", o, peer.HelloWait)
	if err != nil {
		return nil, err
	}
	conn, h := m.Conn, m.Hello
	r := &receiver{peerPID: h.PID}
	if h.MaxFrame <= 0 || h.MaxFrame > peer.MaxFrameLen {
		return nil, m.Refuse(fmt.Errorf("the sender announced frames of %d bytes: want 1 … %d", h.MaxFrame, peer.MaxFrameLen))
	}
	// Enlarged before our hello: the sender writes only after it.
	if _, r.rcvBuf, err = sys.SetSocketBuffers(conn, sockBuf); err != nil {
		r.adjusted = append(r.adjusted, "socket buffers not enlarged: "+err.Error())
	}
	if err := peer.Send(conn, peer.Hello{Backend: "unix", PID: os.Getpid()}); err != nil {
		conn.Close()
		return nil, backend.ErrorfAt("unix", "receiver", "%w", err)
	}
	if r.fd, err = dataFd(conn); err != nil {
		conn.Close()
		return nil, backend.ErrorfAt("unix", "receiver", "%w", err)
	}
	fd := r.fd.Int()
	r.sr = peer.NewStreamReader(func(b []byte) (int, error) {
		n, err := sys.ReadRaw(fd, b)
		switch {
		case sys.IsAgain(err):
			return 0, errEmpty
		case sys.IsConnReset(err):
			return 0, nil // the sender died: end of stream
		case err != nil:
			return 0, err
		}
		return n, nil
	})
	// A frame header claiming more than the sender announced is a
	// corrupted frame.
	r.sr.Max = h.MaxFrame
	if err := r.sr.Presize(h.MaxFrame); err != nil {
		r.Close()
		return nil, backend.ErrorfAt("unix", "receiver", "%w", err)
	}
	return r, nil
}

// Next returns the frames already buffered, or reads until a frame is
// complete or timeout has passed. Each read(2) waits in the kernel for at
// most ioSlice; a wait shorter than that goes through poll(2) first, so that
// Next keeps to its timeout.
func (r *receiver) Next(views [][]byte, timeout time.Duration) (int, error) {
	start := sys.MonotonicNs()
	for {
		if left := time.Duration(start + int64(timeout) - sys.MonotonicNs()); left < ioSlice && !r.sr.HasFrame() {
			if left <= 0 {
				return 0, nil
			}
			ready, err := sys.PollIn(r.fd.Int(), left)
			if err != nil {
				return 0, backend.ErrorfAt("unix", "receiver", "%w", err)
			}
			if !ready {
				return 0, nil
			}
		}
		n, err := r.sr.Next(views)
		if n > 0 || (err != nil && !errors.Is(err, errEmpty)) {
			return n, err
		}
	}
}

// SumPayloads makes the stream reader compute each payload's CRC-32C read
// by read, while the bytes are in cache (recv.PayloadSummer): a frame
// larger than the socket buffer arrives in many reads, and a pass over it
// after the last one would read it back from L3.
func (r *receiver) SumPayloads() bool {
	r.sr.SumPayloads()
	r.sum = true
	return true
}

// PayloadSums returns the CRCs of the frames of the last Next.
func (r *receiver) PayloadSums() []frame.PayloadCRC { return r.sr.Sums() }

func (r *receiver) Info() backend.Info {
	d := map[string]string{
		"rcvbuf":   strconv.Itoa(r.rcvBuf),
		"reads":    strconv.FormatUint(r.sr.Reads, 10),
		"frames":   strconv.FormatUint(r.sr.Frames, 10),
		"peer_pid": strconv.Itoa(r.peerPID),
	}
	if r.sum {
		d["payload_crc"] = "per read"
	}
	if r.sr.Frames > 0 {
		d["reads_per_frame"] = strconv.FormatFloat(float64(r.sr.Reads)/float64(r.sr.Frames), 'f', 3, 64)
	}
	return backend.Info{Backend: "unix", Mode: "stream", NUMANode: -1, Details: d, Adjusted: r.adjusted}
}

func (r *receiver) Close() error {
	if r.sr != nil {
		r.sr.Close()
	}
	return r.fd.Close()
}
