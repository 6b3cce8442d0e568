//go:build linux

package shm

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/peer"
	"github.com/wpg-dev/wpg/shmring"
)

// open opens the backend for one job: a sender per worker and a
// receiver, each from the options alone.
var open = backend.Factories{Sender: newSender, Receiver: newReceiver}.Open

type sender struct {
	peer.RingSender
	full      uint64
	ringBytes int
	busy      bool
}

func newSender(ctx context.Context, o backend.Options) (backend.Sender, error) {
	if err := o.NeedMaxFrame("shm"); err != nil {
		return nil, err
	}
	slots := o.Mem.Slots
	if slots <= 0 {
		slots = DefaultSlots(o.MaxFrame)
	}
	ring, err := shmring.Create(shmring.Config{Slots: slots, SlotSize: o.MaxFrame})
	if err != nil {
		var ae *sys.AllocError
		if errors.As(err, &ae) {
			return nil, backend.ErrorfAt("shm", "sender", "%w", err) // says how to fix it
		}
		return nil, backend.ErrorfAt("shm", "sender", "%w (lower --slots or --size)", err)
	}
	s := &sender{busy: o.Mem.BusyWait, ringBytes: ring.Size()}
	s.Ring = ring
	q := peer.RecvRequest{RecvMode: o.Mem.RecvMode, BusyWait: o.Mem.BusyWait}
	if _, err := s.Open(ctx, "shm", o, q, peer.Hello{MaxFrame: o.MaxFrame, Slots: ring.Slots()}, "were handed over"); err != nil {
		s.Discard()
		return nil, err
	}
	s.Prod.BusyWait = o.Mem.BusyWait
	return s, nil
}

func (s *sender) Reserve(bufs [][]byte) (int, error) {
	// Take a useful batch (up to a quarter of the ring): when the ring is
	// nearly full, wait for room rather than turning a full ring into
	// one-frame batches.
	want := max(1, min(len(bufs), s.Ring.Slots()/4))
	n, err := s.Prod.Reserve(bufs)
	if err != nil {
		return 0, s.peerGoneOr(err)
	}
	if n >= want {
		return n, nil
	}
	s.full++
	if err := s.Prod.WaitSpaceN(want, peer.WaitSlice); err != nil {
		return 0, s.peerGoneOr(err)
	}
	if err := s.PeerGone(); err != nil {
		return 0, err
	}
	n, err = s.Prod.Reserve(bufs)
	if err != nil {
		return 0, s.peerGoneOr(err)
	}
	return n, nil
}

func (s *sender) peerGoneOr(err error) error {
	if g := s.PeerGone(); g != nil {
		return g
	}
	return backend.Errorf("shm", "%w", err)
}

func (s *sender) Commit(lens []int) (int, error) {
	n := s.Prod.Commit(lens)
	s.Frames += uint64(n)
	return n, nil
}

func (s *sender) MaxFrame() int { return s.Ring.SlotSize() }

func (s *sender) Info() backend.Info {
	wait := "futex"
	if s.busy {
		wait = "busy"
	}
	return backend.Info{
		Backend: "shm", Mode: "ring", NUMANode: -1, RingDepth: s.Ring.Slots(),
		Details: s.Details(map[string]string{
			"slot_size":     strconv.Itoa(s.Ring.SlotSize()),
			"slot_stride":   strconv.Itoa(s.Ring.Stride()),
			"ring_bytes":    strconv.Itoa(s.ringBytes),
			"wait":          wait,
			"ring_full":     strconv.FormatUint(s.full, 10),
			"sleeps":        strconv.FormatUint(s.Prod.Sleeps, 10),
			"frames":        strconv.FormatUint(s.Frames, 10),
			"render":        "in place (frames are written into the ring slots)",
			"rendezvous":    "unix socket, memfd passed with SCM_RIGHTS",
			"syscalls_idle": "futex wake only when the receiver sleeps",
		}),
	}
}

type receiver struct {
	peer.RingReceiver
	copyOut bool
	bufs    *sys.SharedMapping
	perCopy int
	busy    bool
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
		return nil, backend.ErrorfAt("shm", "receiver", "--recv-mode %q: choose inplace or copy", o.Mem.RecvMode)
	}
	r := &receiver{copyOut: copyOut, busy: o.Mem.BusyWait}
	m, err := r.Meet(ctx, "shm", o)
	if err != nil {
		return nil, err
	}
	if len(m.Fds) != 1 {
		return nil, m.Refuse(fmt.Errorf("the sender passed %d descriptors, want the ring's memfd", len(m.Fds)))
	}
	if err := r.OpenRing(m); err != nil {
		return nil, m.Refuse(err)
	}
	if copyOut {
		ss := r.Ring.SlotSize()
		r.perCopy = max(1, copyBudget/ss)
		r.bufs, err = sys.Alloc(r.perCopy*ss, fmt.Sprintf("the copy buffers (%d × %d bytes)", r.perCopy, ss))
		if err != nil {
			r.Ring.Close()
			return nil, m.Refuse(err)
		}
		r.Release = r.bufs.Close
	}
	if err := r.Answer(peer.Hello{}); err != nil {
		return nil, err
	}
	r.Cons.BusyWait = o.Mem.BusyWait
	return r, nil
}

func (r *receiver) Next(views [][]byte, timeout time.Duration) (int, error) {
	if r.copyOut && len(views) > r.perCopy {
		views = views[:r.perCopy]
	}
	n, err := peer.NextOrGone(r.Cons, views, r.Gone, timeout)
	if n == 0 || err != nil {
		return 0, err
	}
	r.Frames += uint64(n)
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
		ss := r.Ring.SlotSize()
		for i := 0; i < n; i++ {
			dst := mem[i*ss : i*ss+len(views[i])]
			copy(dst, views[i])
			views[i] = dst
		}
		r.Cons.Release()
	}
	return n, nil
}

func (r *receiver) Info() backend.Info {
	if info, closed := r.Last(); closed {
		return info
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
		Backend: "shm", Mode: mode, NUMANode: -1, RingDepth: r.Ring.Slots(),
		Details: r.Details(map[string]string{
			"slot_size":  strconv.Itoa(r.Ring.SlotSize()),
			"ring_bytes": strconv.Itoa(r.Ring.Size()),
			"wait":       wait,
			"sleeps":     strconv.FormatUint(r.Cons.Sleeps, 10),
		}),
	}
}

func (r *receiver) Close() error { return r.CloseWith(r.Info()) }
