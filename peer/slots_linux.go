package peer

import (
	"context"
	"encoding/binary"
	"io"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/shmring"
)

// Slots is the sending half shared by the paths whose receiver reads frames
// out of the sender's own staging memory (cma's process_vm_readv, xpmem's
// attach): frame i of the stream lives in staging slot i mod Ring.Slots(),
// and an 8-byte descriptor (the frame's length) in the shmring tells the
// receiver it is there. Reserve hands out the staging slots in ring order;
// Publish writes the descriptors. It allocates only when a batch grows.
type Slots struct {
	Name     string // backend name, for errors
	Ring     *shmring.Ring
	Prod     *shmring.Producer
	Mem      []byte // the staging memory, Ring.Slots() × Stride bytes
	Stride   int
	MaxFrame int
	// Wait is how long one wait for ring space lasts before PeerGone is
	// asked again.
	Wait time.Duration
	// PeerGone returns the error to stop with once the receiver has gone.
	PeerGone func() error
	// Staging, when 1 … Ring.Slots()-1, is the number of staging slots:
	// frame i lives in slot i mod Staging, and Reserve hands out a slot
	// only once the receiver has released the frame that used it before
	// (at most Staging frames in flight). 0: one per ring slot.
	Staging int

	reserved int
	descs    [][]byte
	eights   []int
}

// Reserve fills bufs with up to len(bufs) staging slots, waiting for ring
// space when none is free; it fails with PeerGone's error once the receiver
// has gone.
func (s *Slots) Reserve(bufs [][]byte) (int, error) {
	if cap(s.descs) < len(bufs) {
		s.descs = make([][]byte, len(bufs))
		s.eights = make([]int, len(bufs))
		for i := range s.eights {
			s.eights[i] = 8
		}
	}
	d := s.descs[:len(bufs)]
	n, err := s.reserve(d)
	if err == nil && n == 0 {
		if err = s.Prod.WaitSpaceN(s.Ring.Slots()-s.staging()+1, s.Wait); err == nil {
			if g := s.PeerGone(); g != nil {
				return 0, g
			}
			n, err = s.reserve(d)
		}
	}
	if err != nil {
		if g := s.PeerGone(); g != nil {
			return 0, g
		}
		return 0, backend.Errorf(s.Name, "%w", err)
	}
	for i := 0; i < n; i++ {
		off := s.Offset(i)
		bufs[i] = s.Mem[off : off+s.MaxFrame : off+s.MaxFrame]
	}
	s.reserved = n
	return n, nil
}

// staging is the number of staging slots.
func (s *Slots) staging() int {
	if s.Staging > 0 && s.Staging < s.Ring.Slots() {
		return s.Staging
	}
	return s.Ring.Slots()
}

// reserve takes up to len(d) ring slots whose staging slots are free.
func (s *Slots) reserve(d [][]byte) (int, error) {
	if st := s.staging(); st < s.Ring.Slots() {
		d = d[:max(0, min(len(d), st-s.Prod.Pending()))]
	}
	return s.Prod.Reserve(d)
}

// Reserved is the number of slots the last Reserve handed out.
func (s *Slots) Reserved() int { return s.reserved }

// Offset is the staging offset of the i-th slot of the last Reserve.
func (s *Slots) Offset(i int) int {
	return int((s.Prod.Index()+uint64(i))%uint64(s.staging())) * s.Stride
}

// Slot is the ring slot number of the i-th slot of the last Reserve.
func (s *Slots) Slot(i int) int {
	return int((s.Prod.Index() + uint64(i)) % uint64(s.Ring.Slots()))
}

// Publish writes the descriptors of the first min(len(lens), Reserved())
// reserved frames and hands them to the receiver; it returns how many.
func (s *Slots) Publish(lens []int) int {
	n := min(len(lens), s.reserved)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint64(s.descs[i], uint64(lens[i]))
	}
	s.Prod.Commit(s.eights[:n])
	s.reserved = 0
	return n
}

// Drain waits until the receiver has consumed every frame committed to
// prod, asking gone between waits of wait; it returns gone's error if the
// receiver leaves first, and gives up (name's error) when, after ctx is
// cancelled, the receiver takes nothing for StallGrace.
func Drain(ctx context.Context, name string, prod *shmring.Producer, wait time.Duration, gone func() error) error {
	stall := Stall{Ctx: ctx}
	for {
		pending := prod.Pending()
		if pending <= 0 {
			return nil
		}
		if err := gone(); err != nil {
			return err
		}
		if stall.Still(uint64(pending)) {
			return backend.Errorf(name, "the receiver took no frame for %v after the run stopped: %d frames left undelivered in the ring", StallGrace, pending)
		}
		_ = prod.WaitSpace(wait)
		time.Sleep(100 * time.Microsecond)
	}
}

// GoneError is the error a sender feeding receiver pid through prod stops
// with once the receiver has gone: gone (from Watch) is closed, or the
// receiver closed the ring. It counts the frames the receiver took: sent,
// less those still pending in the ring ("after N frames <taken>"). It
// returns nil while the receiver is there.
func GoneError(name string, pid int, gone <-chan struct{}, prod *shmring.Producer, sent uint64, taken string) error {
	select {
	case <-gone:
		return backend.Errorf(name, "the receiver (pid %d) has gone: its socket closed after %d frames %s", pid, sent-uint64(max(0, prod.Pending())), taken)
	default:
		if prod.PeerClosed() {
			return backend.Errorf(name, "the receiver (pid %d) closed the ring after %d frames", pid, sent-uint64(max(0, prod.Pending())))
		}
		return nil
	}
}

// NextOrGone takes up to len(views) entries from cons like Consumer.Next,
// waiting up to timeout. Once the sender has gone (gone, from Watch, is
// closed: it died without closing the ring) and the ring holds nothing
// more, it returns io.EOF, so the receiver reports what arrived.
func NextOrGone(cons *shmring.Consumer, views [][]byte, gone <-chan struct{}, timeout time.Duration) (int, error) {
	n, err := cons.Next(views, timeout)
	if n == 0 && err == nil {
		select {
		case <-gone:
			if n, err = cons.Next(views, 0); n == 0 && err == nil {
				return 0, io.EOF
			}
		default:
		}
	}
	return n, err
}

// SlotViews points views at the staging slots that the n descriptors taken
// from ring index first describe: descriptor i (the frame's length, at most
// maxFrame) for slot (first+i) mod slots, stride bytes apart in mem.
func SlotViews(views, descs [][]byte, mem []byte, first, slots uint64, stride, maxFrame int) {
	for i, d := range descs {
		l := min(int(binary.LittleEndian.Uint64(d)), maxFrame)
		off := int((first+uint64(i))%slots) * stride
		views[i] = mem[off : off+l : off+l]
	}
}
