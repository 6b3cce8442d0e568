//go:build linux

package shm

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/peer"
	"github.com/wpg-dev/wpg/shmring"
)

func init() {
	backend.Register(backend.Registration{
		Name:      "shm",
		Kind:      backend.KindLocal,
		Summary:   "a ring of slots in a memfd shared by sender and receiver processes",
		Open:      backend.Factories{Sender: newSender, Receiver: newReceiver}.Open,
		Receives:  true,
		Payload:   true,
		NeedsPeer: true,
		Flags:     []string{"connect", "listen", "recv-mode", "busy-wait", "slots"},
		Check: func(o backend.Options) error {
			switch o.Mem.RecvMode {
			case "", "inplace", "copy":
				return nil
			}
			return fmt.Errorf("shm: --recv-mode %q: choose inplace (the default) or copy", o.Mem.RecvMode)
		},
	})
}

const (
	ringBudget  = 16 << 20 // default ring size target in bytes
	maxDefSlots = 32768
	copyBudget  = 1 << 20 // bytes copied out per Next in copy mode (cache-sized)
	// cacheMinFrame … cacheMaxFrame: frame strides that get a two-slot ring.
	cacheMinFrame = 128 << 10
	cacheMaxFrame = 2<<20 + 64
	helloWait     = 10 * time.Second
	waitSlice     = 20 * time.Millisecond
)

// DefaultSlots is the slot count used when --slots is not given: two for
// frames of 128 KiB … 2 MiB, so that the ring stays in the receiver's L2
// from frame to frame (the sender rewrites only header and stamps of a slot;
// verified, in place: 19.4 → 29.7 GB/s at 1 MiB, 20.4 → 35.3 at 460,800 B,
// 21.3 → 28.4 at 128 KiB, medians of alternated runs; 4 MiB unchanged);
// otherwise about 16 MiB of ring, at least 4 slots (2 above 64 MiB
// frames), at most 32768 (a deep ring for small frames rides out wake-up
// latencies).
func DefaultSlots(maxFrame int) int {
	stride := (maxFrame + 63) &^ 63
	if stride >= cacheMinFrame && stride <= cacheMaxFrame {
		return 2
	}
	n := ringBudget / stride
	minSlots := 4
	if stride > 64<<20 {
		minSlots = 2
	}
	if n < minSlots {
		return minSlots
	}
	n = 1 << (bits.Len(uint(n)) - 1)
	return min(n, maxDefSlots)
}

type sender struct {
	peer.Session
	ctx       context.Context // cancelled when the run stops
	ring      *shmring.Ring
	prod      *shmring.Producer
	frames    uint64
	full      uint64
	ringBytes int
	busy      bool
	closed    bool
}

func newSender(ctx context.Context, o backend.Options) (backend.Sender, error) {
	if o.MaxFrame <= 0 {
		return nil, errors.New("shm: MaxFrame not set")
	}
	slots := o.Mem.Slots
	if slots <= 0 {
		slots = DefaultSlots(o.MaxFrame)
	}
	ring, err := shmring.Create(shmring.Config{Slots: slots, SlotSize: o.MaxFrame})
	if err != nil {
		var ae *sys.AllocError
		if errors.As(err, &ae) {
			return nil, fmt.Errorf("shm sender: %w", err) // says how to fix it
		}
		return nil, fmt.Errorf("shm sender: %w (lower --slots or --size)", err)
	}
	s := &sender{ctx: ctx, ring: ring, busy: o.Mem.BusyWait, ringBytes: ring.Size()}
	if err := s.Reach(ctx, "shm", o, helloWait, peer.RecvRequest{RecvMode: o.Mem.RecvMode, BusyWait: o.Mem.BusyWait}); err != nil {
		ring.Close()
		return nil, err
	}
	if _, err := s.Exchange(peer.Hello{MaxFrame: o.MaxFrame, Slots: ring.Slots()}, helloWait, ring.Fd()); err != nil {
		ring.Close()
		return nil, err
	}
	s.prod = ring.Producer()
	s.prod.BusyWait = o.Mem.BusyWait
	s.Watch()
	return s, nil
}

func (s *sender) peerGone() error { return s.GoneError(s.prod, s.frames, "were handed over") }

func (s *sender) Reserve(bufs [][]byte) (int, error) {
	// Take a useful batch (up to a quarter of the ring): when the ring is
	// nearly full, wait for room rather than turning a full ring into
	// one-frame batches.
	want := max(1, min(len(bufs), s.ring.Slots()/4))
	n, err := s.prod.Reserve(bufs)
	if err != nil {
		return 0, s.peerGoneOr(err)
	}
	if n >= want {
		return n, nil
	}
	s.full++
	if err := s.prod.WaitSpaceN(want, waitSlice); err != nil {
		return 0, s.peerGoneOr(err)
	}
	if err := s.peerGone(); err != nil {
		return 0, err
	}
	n, err = s.prod.Reserve(bufs)
	if err != nil {
		return 0, s.peerGoneOr(err)
	}
	return n, nil
}

func (s *sender) peerGoneOr(err error) error {
	if g := s.peerGone(); g != nil {
		return g
	}
	return fmt.Errorf("shm: %w", err)
}

func (s *sender) Commit(lens []int) (int, error) {
	n := s.prod.Commit(lens)
	s.frames += uint64(n)
	return n, nil
}

func (s *sender) MaxFrame() int { return s.ring.SlotSize() }

func (s *sender) Info() backend.Info {
	wait := "futex"
	if s.busy {
		wait = "busy"
	}
	return backend.Info{
		Backend: "shm", Mode: "ring", NUMANode: -1, RingDepth: s.ring.Slots(),
		Details: s.Details(map[string]string{
			"slot_size":     strconv.Itoa(s.ring.SlotSize()),
			"slot_stride":   strconv.Itoa(s.ring.Stride()),
			"ring_bytes":    strconv.Itoa(s.ringBytes),
			"wait":          wait,
			"ring_full":     strconv.FormatUint(s.full, 10),
			"sleeps":        strconv.FormatUint(s.prod.Sleeps, 10),
			"frames":        strconv.FormatUint(s.frames, 10),
			"render":        "in place (frames are written into the ring slots)",
			"rendezvous":    "unix socket, memfd passed with SCM_RIGHTS",
			"syscalls_idle": "futex wake only when the receiver sleeps",
		}),
	}
}

// Flush waits until the receiver has consumed every committed frame.
func (s *sender) Flush() error { return peer.Drain(s.ctx, "shm", s.prod, waitSlice, s.peerGone) }

func (s *sender) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.Hangup(s.prod)
	if cerr := s.ring.Close(); err == nil {
		err = cerr
	}
	return err
}

type receiver struct {
	ring    *shmring.Ring
	cons    *shmring.Consumer
	conn    *net.UnixConn
	gone    <-chan struct{}
	copyOut bool
	bufs    *sys.SharedMapping
	perCopy int
	busy    bool
	peerPID int
	frames  uint64
	info    backend.Info
}

func newReceiver(ctx context.Context, o backend.Options) (backend.Receiver, error) {
	if err := peer.NeedListen("shm", o.Listen); err != nil {
		return nil, err
	}
	var copyOut bool
	switch o.Mem.RecvMode {
	case "", "inplace":
	case "copy":
		copyOut = true
	default:
		return nil, fmt.Errorf("shm receiver: --recv-mode %q: choose inplace or copy", o.Mem.RecvMode)
	}
	m, err := peer.Meet(ctx, "shm", o, helloWait)
	if err != nil {
		return nil, err
	}
	conn, h := m.Conn, m.Hello
	if len(m.Fds) != 1 {
		return nil, m.Refuse(fmt.Errorf("the sender passed %d descriptors, want the ring's memfd", len(m.Fds)))
	}
	ring, err := shmring.Open(m.Fds[0])
	m.Fds = nil // the ring owns it, also when Open fails
	if err != nil {
		return nil, m.Refuse(err)
	}
	r := &receiver{ring: ring, conn: conn, copyOut: copyOut, busy: o.Mem.BusyWait, peerPID: h.PID}
	if copyOut {
		r.perCopy = max(1, copyBudget/ring.SlotSize())
		r.bufs, err = sys.Alloc(r.perCopy*ring.SlotSize(), fmt.Sprintf("the copy buffers (%d × %d bytes)", r.perCopy, ring.SlotSize()))
		if err != nil {
			ring.Close()
			return nil, m.Refuse(err)
		}
	}
	if err := peer.Send(conn, peer.Hello{Backend: "shm", PID: os.Getpid()}); err != nil {
		r.Close()
		return nil, fmt.Errorf("shm receiver: %w", err)
	}
	r.cons = ring.Consumer()
	r.cons.BusyWait = o.Mem.BusyWait
	r.gone = peer.Watch(conn)
	return r, nil
}

func (r *receiver) Next(views [][]byte, timeout time.Duration) (int, error) {
	if r.copyOut && len(views) > r.perCopy {
		views = views[:r.perCopy]
	}
	n, err := peer.NextOrGone(r.cons, views, r.gone, timeout)
	if n == 0 || err != nil {
		return 0, err
	}
	r.frames += uint64(n)
	if !r.copyOut {
		// A consumer reads its data: frames sent without a checksum
		// (--verify off) would otherwise be taken in place with only
		// their headers read, which measures no bandwidth.
		for _, v := range views[:n] {
			if !frame.PayloadHasChecksum(v) {
				frame.ReadPayload(v)
			}
		}
	}
	if r.copyOut {
		mem := r.bufs.Bytes()
		ss := r.ring.SlotSize()
		for i := 0; i < n; i++ {
			dst := mem[i*ss : i*ss+len(views[i])]
			copy(dst, views[i])
			views[i] = dst
		}
		r.cons.Release()
	}
	return n, nil
}

func (r *receiver) Info() backend.Info {
	if r.ring == nil {
		return r.info
	}
	mode := "inplace"
	if r.copyOut {
		mode = "copy"
	}
	wait := "futex"
	if r.busy {
		wait = "busy"
	}
	return backend.Info{
		Backend: "shm", Mode: mode, NUMANode: -1, RingDepth: r.ring.Slots(),
		Details: map[string]string{
			"slot_size":  strconv.Itoa(r.ring.SlotSize()),
			"ring_bytes": strconv.Itoa(r.ring.Size()),
			"wait":       wait,
			"frames":     strconv.FormatUint(r.frames, 10),
			"sleeps":     strconv.FormatUint(r.cons.Sleeps, 10),
			"peer_pid":   strconv.Itoa(r.peerPID),
		},
	}
}

func (r *receiver) Close() error {
	if r.ring == nil {
		return nil
	}
	r.info = r.Info()
	if r.cons != nil {
		r.cons.Close()
	}
	r.conn.Close()
	err := r.ring.Close()
	r.ring = nil
	if r.bufs != nil {
		r.bufs.Close()
	}
	return err
}
