//go:build linux

package xpmem

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/peer"
	"github.com/wpg-dev/wpg/shmring"
)

func init() {
	backend.Register(backend.Registration{
		Name:      "xpmem",
		Kind:      backend.KindLocal,
		Summary:   "XPMEM attach of the sender's memory, frames read in place (where /dev/xpmem exists)",
		Open:      backend.Factories{Sender: newSender, Receiver: newReceiver}.Open,
		Receives:  true,
		Payload:   true,
		NeedsPeer: true,
		Flags:     []string{"connect", "listen", "slots"},
		Check:     func(o backend.Options) error { return peer.CheckSlots("xpmem", o.Mem.Slots, maxSlots) },
	})
}

const (
	stagingBudget = 16 << 20
	maxSlots      = 1024
	helloWait     = 10 * time.Second
	waitSlice     = 20 * time.Millisecond
	exportMode    = 0o600
)

// errNotLoaded explains a missing /dev/xpmem with the fix.
func errNotLoaded(side string, err error) error {
	return fmt.Errorf("xpmem %s: %w: load the xpmem kernel module (https://github.com/hpc/xpmem) or use --backend cma/shm", side, err)
}

// stride is the staging slot stride (peer.SlotStride).
func stride(maxFrame int) int { return peer.SlotStride(maxFrame) }

// slotsFor returns the staging slot count for stagingBudget bytes of slots.
func slotsFor(maxFrame, want int) int {
	return peer.SlotCount(maxFrame, want, stagingBudget, maxSlots)
}

// exportLen is the staging length rounded up to whole pages, as XPMEM
// make and attach need.
func exportLen(slots, stride int) int {
	pg := os.Getpagesize()
	return (slots*stride + pg - 1) / pg * pg
}

type sender struct {
	peer.Session
	ctx      context.Context // cancelled when the run stops
	xp       *sys.XPMEM
	segid    sys.XPMEMSegid
	ring     *shmring.Ring
	prod     *shmring.Producer
	staging  *sys.Mapping
	stride   int
	maxFrame int
	slots    peer.Slots
	version  int
	frames   uint64
	closed   bool
}

func newSender(ctx context.Context, o backend.Options) (backend.Sender, error) {
	if o.MaxFrame <= 0 {
		return nil, errors.New("xpmem: MaxFrame not set")
	}
	xp, err := sys.OpenXPMEM()
	if err != nil {
		if errors.Is(err, sys.ErrXPMEMNotLoaded) {
			return nil, errNotLoaded("sender", err)
		}
		return nil, fmt.Errorf("xpmem sender: %w", err)
	}
	s := &sender{ctx: ctx, xp: xp, maxFrame: o.MaxFrame, stride: stride(o.MaxFrame)}
	if s.version, err = xp.Version(); err != nil {
		xp.Close()
		return nil, fmt.Errorf("xpmem sender: %w (is %s really the xpmem module?)", err, sys.XPMEMDevice)
	}
	s.ring, err = shmring.Create(shmring.Config{Slots: slotsFor(o.MaxFrame, o.Mem.Slots), SlotSize: 8})
	if err != nil {
		xp.Close()
		return nil, fmt.Errorf("xpmem sender: %w", err)
	}
	n := exportLen(s.ring.Slots(), s.stride)
	if s.staging, err = sys.MapAnonLazy(n, false); err != nil {
		s.release()
		return nil, fmt.Errorf("xpmem sender staging (%d × %d bytes): %w", s.ring.Slots(), s.stride, err)
	}
	if s.segid, err = xp.Make(s.staging.Addr(), uint64(n), exportMode); err != nil {
		s.release()
		return nil, fmt.Errorf("xpmem sender: export the staging slots: %w", err)
	}
	if err := s.Reach(ctx, "xpmem", o, helloWait, peer.RecvRequest{}); err != nil {
		s.release()
		return nil, err
	}
	// Addr carries the segment id, Len the slot stride.
	h := peer.Hello{MaxFrame: o.MaxFrame, Slots: s.ring.Slots(), Addr: uint64(s.segid), Len: s.stride, Mode: "attach"}
	if _, err := s.Exchange(h, helloWait, s.ring.Fd()); err != nil {
		s.release()
		return nil, err
	}
	s.prod = s.ring.Producer()
	s.Watch()
	s.slots = peer.Slots{Name: "xpmem", Ring: s.ring, Prod: s.prod, Mem: s.staging.Bytes(), Stride: s.stride,
		MaxFrame: s.maxFrame, Wait: waitSlice, PeerGone: s.peerGone}
	return s, nil
}

// release frees what the sender set up itself (the session is the
// caller's).
func (s *sender) release() {
	if s.segid != 0 {
		_ = s.xp.Remove(s.segid)
	}
	_ = s.xp.Close()
	_ = s.staging.Close()
	if s.ring != nil {
		s.ring.Close()
	}
	s.closed = true
}

func (s *sender) peerGone() error { return s.GoneError(s.prod, s.frames, "were taken") }

// Reserve hands out the exported staging slots the receiver reads.
func (s *sender) Reserve(bufs [][]byte) (int, error) { return s.slots.Reserve(bufs) }

func (s *sender) Commit(lens []int) (int, error) {
	n := s.slots.Publish(lens)
	s.frames += uint64(n)
	return n, nil
}

func (s *sender) MaxFrame() int { return s.maxFrame }

func (s *sender) Info() backend.Info {
	d := s.Details(map[string]string{
		"staging_slots":  strconv.Itoa(s.ring.Slots()),
		"slot_stride":    strconv.Itoa(s.stride),
		"frames":         strconv.FormatUint(s.frames, 10),
		"segid":          fmt.Sprintf("%#x", int64(s.segid)),
		"module_version": fmt.Sprintf("%d.%d (%#x)", s.version>>16, s.version&0xffff, s.version),
		"transfer":       "receiver attaches the sender's staging slots through /dev/xpmem and reads in place; descriptors through a memfd ring",
	})
	return backend.Info{Backend: "xpmem", Mode: "attach", NUMANode: -1, RingDepth: s.ring.Slots(), Details: d}
}

func (s *sender) Flush() error { return peer.Drain(s.ctx, "xpmem", s.prod, waitSlice, s.peerGone) }

func (s *sender) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.Hangup(s.prod)
	// Removing the segment tears down any attachment the receiver still has.
	if rerr := s.xp.Remove(s.segid); rerr != nil && err == nil {
		err = rerr
	}
	_ = s.xp.Close()
	s.ring.Close()
	_ = s.staging.Close()
	return err
}

type receiver struct {
	xp       *sys.XPMEM
	apid     sys.XPMEMApid
	at       *sys.XPMEMAttachment
	ring     *shmring.Ring
	cons     *shmring.Consumer
	conn     *net.UnixConn
	gone     <-chan struct{}
	pid      int
	stride   int
	slots    uint64
	maxFrame int
	dviews   [][]byte
	frames   uint64
	info     backend.Info
}

func newReceiver(ctx context.Context, o backend.Options) (backend.Receiver, error) {
	if err := peer.NeedListen("xpmem", o.Listen); err != nil {
		return nil, err
	}
	// Fail before anyone connects when the module is missing.
	xp, err := sys.OpenXPMEM()
	if err != nil {
		if errors.Is(err, sys.ErrXPMEMNotLoaded) {
			return nil, errNotLoaded("receiver", err)
		}
		return nil, fmt.Errorf("xpmem receiver: %w", err)
	}
	m, err := peer.Meet(ctx, "xpmem", o, helloWait)
	if err != nil {
		xp.Close()
		return nil, err
	}
	conn, h := m.Conn, m.Hello
	r := &receiver{xp: xp, conn: conn, pid: h.PID, stride: h.Len, maxFrame: h.MaxFrame}
	fail := func(err error) (backend.Receiver, error) {
		err = m.Refuse(err)
		r.release()
		return nil, err
	}
	if len(m.Fds) != 1 || h.Addr == 0 || h.Len <= 0 || h.MaxFrame <= 0 || h.Slots <= 0 || h.MaxFrame > peer.MaxFrameLen {
		return fail(errors.New("incomplete xpmem hello from the sender"))
	}
	r.ring, err = shmring.Open(m.Fds[0])
	m.Fds = nil // the ring owns it, also when Open fails
	if err != nil {
		return fail(err)
	}
	r.slots = uint64(r.ring.Slots())
	if r.apid, err = xp.Get(sys.XPMEMSegid(h.Addr), false); err != nil {
		return fail(err)
	}
	if r.at, err = xp.Attach(r.apid, 0, exportLen(r.ring.Slots(), r.stride)); err != nil {
		return fail(err)
	}
	r.dviews = make([][]byte, r.ring.Slots())
	if err := peer.Send(conn, peer.Hello{Backend: "xpmem", PID: os.Getpid()}); err != nil {
		r.release()
		return nil, fmt.Errorf("xpmem receiver: %w", err)
	}
	r.cons = r.ring.Consumer()
	r.gone = peer.Watch(conn)
	return r, nil
}

// Next returns views into the attached staging slots (no copy); the
// slots go back to the sender on the next call.
func (r *receiver) Next(views [][]byte, timeout time.Duration) (int, error) {
	want := min(len(views), len(r.dviews))
	n, err := peer.NextOrGone(r.cons, r.dviews[:want], r.gone, timeout)
	if n == 0 || err != nil {
		return 0, err
	}
	peer.SlotViews(views, r.dviews[:n], r.at.Bytes(), r.cons.Index()-uint64(n), r.slots, r.stride, r.maxFrame)
	r.frames += uint64(n)
	return n, nil
}

func (r *receiver) Info() backend.Info {
	if r.ring == nil {
		return r.info
	}
	d := map[string]string{
		"frames":   strconv.FormatUint(r.frames, 10),
		"peer_pid": strconv.Itoa(r.pid),
		"transfer": "in place in the sender's staging slots attached through /dev/xpmem",
	}
	return backend.Info{Backend: "xpmem", Mode: "attach", NUMANode: -1, RingDepth: int(r.slots), Details: d}
}

// release undoes the set-up in reverse: detach, release, close.
func (r *receiver) release() {
	if r.at != nil {
		_ = r.at.Detach()
		r.at = nil
	}
	if r.apid != 0 {
		_ = r.xp.Release(r.apid)
		r.apid = 0
	}
	if r.ring != nil {
		r.ring.Close()
		r.ring = nil
	}
	_ = r.xp.Close()
	r.conn.Close()
}

func (r *receiver) Close() error {
	if r.ring == nil {
		return nil
	}
	r.info = r.Info()
	if r.cons != nil {
		r.cons.Close()
	}
	r.release()
	return nil
}
