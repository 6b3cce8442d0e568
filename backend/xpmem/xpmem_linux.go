//go:build linux

package xpmem

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/peer"
	"github.com/wpg-dev/wpg/shmring"
)

// open opens the backend for one job: a sender per worker and a
// receiver, each from the options alone.
var open = backend.Factories{Sender: newSender, Receiver: newReceiver}.Open

// openXPMEM opens /dev/xpmem for side ("sender" or "receiver"): a
// missing module is explained with the fix.
func openXPMEM(side string) (*sys.XPMEM, error) {
	xp, err := sys.OpenXPMEM()
	switch {
	case errors.Is(err, sys.ErrXPMEMNotLoaded):
		return nil, backend.ErrorfAt("xpmem", side, "%w: load the xpmem kernel module (https://github.com/hpc/xpmem) or use --backend cma/shm", err)
	case err != nil:
		return nil, backend.ErrorfAt("xpmem", side, "%w", err)
	}
	return xp, nil
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
	peer.RingSender
	xp       *sys.XPMEM
	segid    sys.XPMEMSegid
	staging  *sys.Mapping
	stride   int
	maxFrame int
	slots    peer.Slots
	version  int
}

func newSender(ctx context.Context, o backend.Options) (backend.Sender, error) {
	if err := o.NeedMaxFrame("xpmem"); err != nil {
		return nil, err
	}
	xp, err := openXPMEM("sender")
	if err != nil {
		return nil, err
	}
	s := &sender{xp: xp, maxFrame: o.MaxFrame, stride: stride(o.MaxFrame)}
	s.Release = s.release
	if s.version, err = xp.Version(); err != nil {
		xp.Close()
		return nil, backend.ErrorfAt("xpmem", "sender", "%w (is %s really the xpmem module?)", err, sys.XPMEMDevice)
	}
	s.Ring, err = shmring.Create(shmring.Config{Slots: slotsFor(o.MaxFrame, o.Mem.Slots), SlotSize: 8})
	if err != nil {
		xp.Close()
		return nil, backend.ErrorfAt("xpmem", "sender", "%w", err)
	}
	n := exportLen(s.Ring.Slots(), s.stride)
	if s.staging, err = sys.MapAnonLazy(n, false); err != nil {
		s.Discard()
		return nil, backend.ErrorfAt("xpmem", fmt.Sprintf("sender staging (%d × %d bytes)", s.Ring.Slots(), s.stride), "%w", err)
	}
	if s.segid, err = xp.Make(s.staging.Addr(), uint64(n), exportMode); err != nil {
		s.Discard()
		return nil, backend.ErrorfAt("xpmem", "sender", "export the staging slots: %w", err)
	}
	// Addr carries the segment id, Len the slot stride.
	h := peer.Hello{MaxFrame: o.MaxFrame, Slots: s.Ring.Slots(), Addr: uint64(s.segid), Len: s.stride, Mode: "attach"}
	if _, err := s.Open(ctx, "xpmem", o, peer.RecvRequest{}, h, "were taken"); err != nil {
		s.Discard()
		return nil, err
	}
	s.slots = peer.Slots{Name: "xpmem", Ring: s.Ring, Prod: s.Prod, Mem: s.staging.Bytes(), Stride: s.stride,
		MaxFrame: s.maxFrame, Wait: peer.WaitSlice, PeerGone: s.PeerGone}
	return s, nil
}

// release frees what the sender set up itself, the ring aside (the
// RingSender's Release): removing the segment tears down any attachment
// the receiver still has.
func (s *sender) release() error {
	var err error
	if s.segid != 0 {
		err = s.xp.Remove(s.segid)
	}
	_ = s.xp.Close()
	_ = s.staging.Close()
	return err
}

// Reserve hands out the exported staging slots the receiver reads.
func (s *sender) Reserve(bufs [][]byte) (int, error) { return s.slots.Reserve(bufs) }

func (s *sender) Commit(lens []int) (int, error) {
	n := s.slots.Publish(lens)
	s.Frames += uint64(n)
	return n, nil
}

func (s *sender) MaxFrame() int { return s.maxFrame }

func (s *sender) Info() backend.Info {
	d := s.Details(map[string]string{
		"staging_slots":  strconv.Itoa(s.Ring.Slots()),
		"slot_stride":    strconv.Itoa(s.stride),
		"frames":         strconv.FormatUint(s.Frames, 10),
		"segid":          fmt.Sprintf("%#x", int64(s.segid)),
		"module_version": fmt.Sprintf("%d.%d (%#x)", s.version>>16, s.version&0xffff, s.version),
		"transfer":       "receiver attaches the sender's staging slots through /dev/xpmem and reads in place; descriptors through a memfd ring",
	})
	return backend.Info{Backend: "xpmem", Mode: "attach", NUMANode: -1, RingDepth: s.Ring.Slots(), Details: d}
}

type receiver struct {
	peer.RingReceiver
	xp       *sys.XPMEM
	apid     sys.XPMEMApid
	at       *sys.XPMEMAttachment
	stride   int
	slots    uint64
	maxFrame int
	dviews   [][]byte
}

func newReceiver(ctx context.Context, o backend.Options) (backend.Receiver, error) {
	if err := peer.NeedListen("xpmem", o.Listen); err != nil {
		return nil, err
	}
	// Fail before anyone connects when the module is missing.
	xp, err := openXPMEM("receiver")
	if err != nil {
		return nil, err
	}
	r := &receiver{xp: xp}
	m, err := r.Meet(ctx, "xpmem", o)
	if err != nil {
		xp.Close()
		return nil, err
	}
	h := m.Hello
	r.stride, r.maxFrame = h.Len, h.MaxFrame
	r.Release = r.release
	fail := func(err error) (backend.Receiver, error) {
		err = m.Refuse(err)
		r.release()
		r.Ring.Close()
		return nil, err
	}
	if len(m.Fds) != 1 || h.Addr == 0 || h.Len <= 0 || h.MaxFrame <= 0 || h.Slots <= 0 || h.MaxFrame > peer.MaxFrameLen {
		return fail(errors.New("incomplete xpmem hello from the sender"))
	}
	if err := r.OpenRing(m); err != nil {
		return fail(err)
	}
	r.slots = uint64(r.Ring.Slots())
	if r.apid, err = xp.Get(sys.XPMEMSegid(h.Addr), false); err != nil {
		return fail(err)
	}
	if r.at, err = xp.Attach(r.apid, 0, exportLen(r.Ring.Slots(), r.stride)); err != nil {
		return fail(err)
	}
	r.dviews = make([][]byte, r.Ring.Slots())
	if err := r.Answer(peer.Hello{}); err != nil {
		return nil, err
	}
	return r, nil
}

// Next returns views into the attached staging slots (no copy); the
// slots go back to the sender on the next call.
func (r *receiver) Next(views [][]byte, timeout time.Duration) (int, error) {
	want := min(len(views), len(r.dviews))
	n, err := peer.NextOrGone(r.Cons, r.dviews[:want], r.Gone, timeout)
	if n == 0 || err != nil {
		return 0, err
	}
	peer.SlotViews(views, r.dviews[:n], r.at.Bytes(), r.Cons.Index()-uint64(n), r.slots, r.stride, r.maxFrame)
	r.Frames += uint64(n)
	return n, nil
}

func (r *receiver) Info() backend.Info {
	if info, closed := r.Last(); closed {
		return info
	}
	d := r.Details(map[string]string{"transfer": "in place in the sender's staging slots attached through /dev/xpmem"})
	return backend.Info{Backend: "xpmem", Mode: "attach", NUMANode: -1, RingDepth: int(r.slots), Details: d}
}

// release undoes the attachment in reverse (the RingReceiver's
// Release): detach, release, close.
func (r *receiver) release() error {
	if r.at != nil {
		_ = r.at.Detach()
		r.at = nil
	}
	if r.apid != 0 {
		_ = r.xp.Release(r.apid)
		r.apid = 0
	}
	_ = r.xp.Close()
	return nil
}

func (r *receiver) Close() error { return r.CloseWith(r.Info()) }
