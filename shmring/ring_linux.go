//go:build linux

package shmring

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/wpg-dev/wpg/internal/sys"
)

const (
	magic    = "WPGRING1"
	version  = 1
	pageSize = 4096
	lensOff  = pageSize
	maxSlots = 1 << 20
	// DefaultSpin is how long a side polls before it sleeps on the futex.
	DefaultSpin = 200 * time.Microsecond

	offVersion  = 8
	offSlots    = 12
	offSlotSize = 16
	offStride   = 24
	offData     = 32
	offHead     = 64
	offHeadWake = 72
	offConsWait = 76
	offTail     = 128
	offTailWake = 136
	offProdWait = 140
	offProdDone = 192
	offConsDone = 196
)

// MaxSlotSize is the largest slot: wpg's largest payload frame, 1 GiB of
// payload (frame.MaxPayload) and its 32-byte header
// (frame.PayloadHeaderLen), so that the documented maximum --size fits.
const MaxSlotSize = 1<<30 + 32

// ErrClosed is returned by Producer.Reserve when the consumer has closed
// its side, and wrapped by operations on a closed Ring.
var ErrClosed = errors.New("shmring: peer closed the ring")

// Config sizes a ring.
type Config struct {
	// Slots is the number of slots; it is rounded up to a power of two
	// (2 … 1,048,576).
	Slots int
	// SlotSize is the largest frame a slot holds, in bytes.
	SlotSize int
}

// Ring is one process's mapping of a shared ring. Close is idempotent.
type Ring struct {
	fd       sys.FD
	m        *sys.SharedMapping
	mem      []byte
	slots    uint64
	mask     uint64
	slotSize int
	stride   int
	data     int
	lens     []byte

	head, tail         *atomic.Uint64
	headWake, tailWake *atomic.Uint32
	consWait, prodWait *atomic.Uint32
	prodDone, consDone *atomic.Uint32
	sink               byte
}

// Layout returns the rounded slot count, the stride between slots and the
// total size in bytes of a ring for cfg.
func Layout(cfg Config) (slots, stride int, size int64, err error) {
	if cfg.SlotSize <= 0 || cfg.SlotSize > MaxSlotSize {
		return 0, 0, 0, fmt.Errorf("shmring: slot size %d: want 1 … %d bytes (a 1 GiB payload and its 32-byte header)", cfg.SlotSize, MaxSlotSize)
	}
	if cfg.Slots < 1 || cfg.Slots > maxSlots {
		return 0, 0, 0, fmt.Errorf("shmring: %d slots: want 1 … %d", cfg.Slots, maxSlots)
	}
	slots = max(2, 1<<bits.Len(uint(cfg.Slots-1)))
	stride = alignUp(cfg.SlotSize, 64)
	if stride >= pageSize {
		stride = alignUp(stride, pageSize)
	}
	data := alignUp(lensOff+4*slots, pageSize)
	return slots, stride, int64(data) + int64(slots)*int64(stride), nil
}

func alignUp(n, a int) int { return (n + a - 1) / a * a }

// Create makes a new ring in a memfd and maps it.
func Create(cfg Config) (*Ring, error) {
	slots, stride, size, err := Layout(cfg)
	if err != nil {
		return nil, err
	}
	memfd, err := sys.MemfdCreate("wpg-shmring", size)
	if err != nil {
		return nil, err
	}
	fd := sys.OwnFD(memfd)
	// Both sides pre-fault the ring (MAP_POPULATE): first touches of
	// shared memory are slow and would otherwise land in the first frames.
	m, err := sys.MapShared(memfd, int(size), true)
	if err != nil {
		fd.Close()
		if sys.IsNoMemory(err) {
			return nil, &sys.AllocError{Bytes: size, What: fmt.Sprintf("the shared ring (%d slots of %d bytes)", slots, stride), Err: errors.Unwrap(err)}
		}
		return nil, err
	}
	b := m.Bytes()
	sys.TouchWrite(b) // fresh memfd: zero, and nobody else has it yet
	copy(b, magic)
	binary.LittleEndian.PutUint32(b[offVersion:], version)
	binary.LittleEndian.PutUint32(b[offSlots:], uint32(slots))
	binary.LittleEndian.PutUint64(b[offSlotSize:], uint64(cfg.SlotSize))
	binary.LittleEndian.PutUint64(b[offStride:], uint64(stride))
	binary.LittleEndian.PutUint64(b[offData:], uint64(alignUp(lensOff+4*slots, pageSize)))
	r := &Ring{fd: fd, m: m}
	if err := r.bind(size); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Open maps the ring behind memfd (received from the creating process)
// and takes ownership of memfd: it is closed with the ring, or at once
// when Open fails.
func Open(memfd int) (*Ring, error) {
	fd := sys.OwnFD(memfd)
	size, err := sys.FdSize(memfd)
	if err != nil {
		fd.Close()
		return nil, fmt.Errorf("shmring: open: %w", err)
	}
	if size < lensOff+8 {
		fd.Close()
		return nil, fmt.Errorf("shmring: open: descriptor holds %d bytes, not a ring", size)
	}
	m, err := sys.MapShared(memfd, int(size), true)
	if err != nil {
		fd.Close()
		return nil, fmt.Errorf("shmring: open: %w", err)
	}
	r := &Ring{fd: fd, m: m}
	if err := r.bind(size); err != nil {
		r.Close()
		return nil, err
	}
	r.sink = sys.TouchRead(m.Bytes())
	return r, nil
}

func (r *Ring) bind(size int64) error {
	b := r.m.Bytes()
	if string(b[:8]) != magic {
		return errors.New("shmring: open: no ring header (magic mismatch)")
	}
	if v := binary.LittleEndian.Uint32(b[offVersion:]); v != version {
		return fmt.Errorf("shmring: open: ring version %d, this program speaks %d", v, version)
	}
	r.mem = b
	r.slots = uint64(binary.LittleEndian.Uint32(b[offSlots:]))
	r.slotSize = int(binary.LittleEndian.Uint64(b[offSlotSize:]))
	r.stride = int(binary.LittleEndian.Uint64(b[offStride:]))
	r.data = int(binary.LittleEndian.Uint64(b[offData:]))
	if r.slots == 0 || r.slots&(r.slots-1) != 0 || r.slotSize <= 0 || r.slotSize > MaxSlotSize || r.stride < r.slotSize ||
		int64(r.data)+int64(r.slots)*int64(r.stride) > size || r.data < lensOff+4*int(r.slots) {
		return errors.New("shmring: open: inconsistent ring header")
	}
	r.mask = r.slots - 1
	r.lens = b[lensOff : lensOff+4*int(r.slots)]
	r.head = sys.Uint64At(b, offHead)
	r.tail = sys.Uint64At(b, offTail)
	r.headWake = sys.Uint32At(b, offHeadWake)
	r.tailWake = sys.Uint32At(b, offTailWake)
	r.consWait = sys.Uint32At(b, offConsWait)
	r.prodWait = sys.Uint32At(b, offProdWait)
	r.prodDone = sys.Uint32At(b, offProdDone)
	r.consDone = sys.Uint32At(b, offConsDone)
	return nil
}

// Fd returns the memfd to pass to the peer process (SCM_RIGHTS).
func (r *Ring) Fd() int { return r.fd.Int() }

// Slots returns the number of slots.
func (r *Ring) Slots() int { return int(r.slots) }

// SlotSize returns the largest frame a slot holds.
func (r *Ring) SlotSize() int { return r.slotSize }

// Stride returns the distance between slots in bytes.
func (r *Ring) Stride() int { return r.stride }

// Size returns the bytes of shared memory the ring occupies.
func (r *Ring) Size() int { return len(r.mem) }

// Close unmaps the ring and closes the descriptor.
func (r *Ring) Close() error {
	if r == nil || r.m == nil {
		return nil
	}
	err := r.m.Close()
	r.m, r.mem, r.lens = nil, nil, nil
	if e := r.fd.Close(); err == nil {
		err = e
	}
	return err
}

func (r *Ring) slot(i uint64) []byte {
	off := r.data + int(i&r.mask)*r.stride
	return r.mem[off : off+r.slotSize : off+r.slotSize]
}

// Producer is the writing side; one goroutine uses it.
type Producer struct {
	r         *Ring
	head      uint64
	tailCache uint64
	reserved  int
	// BusyWait makes WaitSpaceN poll until its timeout instead of
	// sleeping; Spin is the polling time before a sleep (DefaultSpin when
	// zero).
	BusyWait bool
	Spin     time.Duration
	// Sleeps counts futex sleeps (the ring stayed full for Spin).
	Sleeps uint64
}

// Producer returns the ring's producer side. Only one process may use it.
func (r *Ring) Producer() *Producer {
	return &Producer{r: r, head: r.head.Load(), tailCache: r.tail.Load()}
}

// Reserve fills bufs with up to len(bufs) free slots (each SlotSize bytes)
// and returns how many, without waiting: 0 when the ring is full. It
// returns ErrClosed once the consumer has closed its side.
func (p *Producer) Reserve(bufs [][]byte) (int, error) {
	r := p.r
	free := r.slots - (p.head - p.tailCache)
	if free < uint64(len(bufs)) {
		p.tailCache = r.tail.Load()
		free = r.slots - (p.head - p.tailCache)
		if free == 0 && r.consDone.Load() != 0 {
			return 0, ErrClosed
		}
	}
	n := min(int(free), len(bufs))
	for i := 0; i < n; i++ {
		bufs[i] = r.slot(p.head + uint64(i))
	}
	p.reserved = n
	return n, nil
}

// Commit publishes the first len(lens) reserved slots, lens[i] bytes each,
// with one store of the head index, and wakes a sleeping consumer.
func (p *Producer) Commit(lens []int) int {
	r := p.r
	n := min(len(lens), p.reserved)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(r.lens[4*int((p.head+uint64(i))&r.mask):], uint32(lens[i]))
	}
	p.head += uint64(n)
	p.reserved = 0
	r.head.Store(p.head)
	if r.consWait.Load() != 0 && r.consWait.CompareAndSwap(1, 0) {
		r.headWake.Add(1)
		sys.FutexWake(r.headWake, 1)
	}
	return n
}

// WaitSpace waits until at least one slot is free, the consumer closed
// (ErrClosed) or timeout passed (nil; the caller re-checks).
func (p *Producer) WaitSpace(timeout time.Duration) error { return p.WaitSpaceN(1, timeout) }

// WaitSpaceN waits until at least n slots (at most the ring size) are free,
// the consumer closed (ErrClosed) or timeout passed (nil). It polls for
// Spin (DefaultSpin when zero), then sleeps on the futex until the consumer
// has freed a quarter of the ring; with BusyWait it polls until the
// timeout.
func (p *Producer) WaitSpaceN(n int, timeout time.Duration) error {
	r := p.r
	need := min(uint64(max(n, 1)), r.slots)
	short := func() bool {
		p.tailCache = r.tail.Load()
		return r.slots-(p.head-p.tailCache) < need
	}
	if !await(short, r.consDone, r.prodWait, r.tailWake, spinOr(p.Spin), p.BusyWait, &p.Sleeps, timeout) {
		return ErrClosed
	}
	return nil
}

// Pending returns the number of published frames the consumer has not
// released yet.
func (p *Producer) Pending() int { return int(p.head - p.r.tail.Load()) }

// Close marks the producer side closed: once it has drained the ring the
// consumer gets io.EOF.
func (p *Producer) Close() { p.r.closeSide(p.r.prodDone, p.r.headWake) }

// PeerClosed reports whether the consumer has closed its side.
func (p *Producer) PeerClosed() bool { return p.r.consDone.Load() != 0 }

// Consumer is the reading side; one goroutine uses it.
type Consumer struct {
	r         *Ring
	tail      uint64
	headCache uint64
	held      int
	// BusyWait makes Next poll until its timeout instead of sleeping;
	// Spin is the polling time before a sleep (DefaultSpin when zero).
	BusyWait bool
	Spin     time.Duration
	// Sleeps counts futex sleeps (the ring stayed empty for Spin).
	Sleeps uint64
}

// Consumer returns the ring's consumer side. Only one process may use it.
func (r *Ring) Consumer() *Consumer {
	return &Consumer{r: r, tail: r.tail.Load(), headCache: r.head.Load()}
}

// Next releases the frames returned by the previous call, then fills views
// with up to len(views) published frames, read in place in the shared
// memory (valid until the next call to Next or Release). It waits at most
// timeout for the first frame and returns 0, nil on timeout, and io.EOF
// when the producer has closed and every frame was consumed.
func (c *Consumer) Next(views [][]byte, timeout time.Duration) (int, error) {
	c.Release()
	r := c.r
	avail := c.headCache - c.tail
	if avail == 0 {
		c.headCache = r.head.Load()
		avail = c.headCache - c.tail
		if avail == 0 {
			if err := c.wait(timeout); err != nil {
				return 0, err
			}
			avail = c.headCache - c.tail
			if avail == 0 {
				return 0, nil
			}
		}
	}
	n := min(int(avail), len(views))
	for i := 0; i < n; i++ {
		idx := (c.tail + uint64(i)) & r.mask
		l := int(binary.LittleEndian.Uint32(r.lens[4*idx:]))
		if l > r.slotSize {
			l = r.slotSize
		}
		off := r.data + int(idx)*r.stride
		views[i] = r.mem[off : off+l : off+l]
	}
	c.held = n
	return n, nil
}

// Release gives the slots of the last Next back to the producer (Next does
// it itself; call it early after copying frames out).
func (c *Consumer) Release() {
	if c.held == 0 {
		return
	}
	r := c.r
	c.tail += uint64(c.held)
	c.held = 0
	r.tail.Store(c.tail)
	// A sleeping producer is woken once a quarter of the ring is free (or
	// the producer closed), not on every release: one futex call per
	// quarter ring instead of one per batch, while three quarters of a
	// ring are still queued to cover the producer's wake-up latency.
	// The flag is taken (1 → 0) by the waker, so that one wake-up is
	// issued per sleep.
	if r.prodWait.Load() != 0 && (c.headCache-c.tail <= r.slots-r.slots/4 || r.prodDone.Load() != 0) &&
		r.prodWait.CompareAndSwap(1, 0) {
		r.tailWake.Add(1)
		sys.FutexWake(r.tailWake, 1)
	}
}

func (c *Consumer) wait(timeout time.Duration) error {
	r := c.r
	empty := func() bool {
		c.headCache = r.head.Load()
		return c.headCache == c.tail
	}
	if !await(empty, r.prodDone, r.consWait, r.headWake, spinOr(c.Spin), c.BusyWait, &c.Sleeps, timeout) && empty() {
		return io.EOF
	}
	return nil
}

// Close gives back the frames of the last Next (the caller is done with
// them: a receiver that stops after its last frame has consumed it) and
// marks the consumer side closed, so that a producer waiting for space
// gets ErrClosed.
func (c *Consumer) Close() {
	c.Release()
	c.r.closeSide(c.r.consDone, c.r.tailWake)
}

// closeSide marks one side done and wakes the other side, which may sleep
// on wake.
func (r *Ring) closeSide(done, wake *atomic.Uint32) {
	if r.mem == nil {
		return
	}
	done.Store(1)
	wake.Add(1)
	sys.FutexWake(wake, 1)
}

// PeerClosed reports whether the producer has closed its side.
func (c *Consumer) PeerClosed() bool { return c.r.prodDone.Load() != 0 }

// await is the wait of both sides: it polls until blocked() is false
// (true), the other side is done (false) or timeout passed (true; the
// caller re-checks). After spinFor, unless busy, it sleeps on the futex
// word wake with its waiting flag set, so that the other side knows to
// wake it (and counts the sleep in *sleeps).
func await(blocked func() bool, otherDone, waiting, wake *atomic.Uint32, spinFor time.Duration, busy bool, sleeps *uint64, timeout time.Duration) bool {
	start := sys.NanotimeNs()
	spinEnd := start + int64(spinFor)
	deadline := start + int64(timeout)
	for i := 0; ; i++ {
		if !blocked() {
			return true
		}
		if otherDone.Load() != 0 {
			return false
		}
		if i&63 == 63 || i == 0 {
			now := sys.NanotimeNs()
			if now >= deadline {
				return true
			}
			if !busy && now >= spinEnd {
				*sleeps++
				waiting.Store(1)
				w := wake.Load()
				if blocked() && otherDone.Load() == 0 {
					sys.FutexWait(wake, w, time.Duration(deadline-now))
				}
				waiting.Store(0)
				continue
			}
		}
		spin(i)
	}
}

// spinOr returns d, or DefaultSpin when d is not positive.
func spinOr(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return DefaultSpin
}

// spin is one step of a polling wait: a PAUSE, every 256th step a
// sched_yield(2), so that a thread that shares the CPU with the other side
// lets it run, and every 4096th a runtime.Gosched, so that two goroutines
// of one process (tests, GOMAXPROCS 1) take turns. The data paths' loops
// run on locked OS threads, where Gosched costs two futex wake-ups (the
// runtime hands the P to another thread and back: 11 % of all CPU in a
// cma profile at 460,800 B when it was called every 256th step).
func spin(i int) {
	sys.Pause()
	switch {
	case i&4095 == 4095:
		runtime.Gosched()
	case i&255 == 255:
		sys.Yield()
	}
}

// Index returns the free-running index of the next slot Reserve hands out
// (slot Index() mod Slots()), for protocols that pair ring slots with
// buffers elsewhere.
func (p *Producer) Index() uint64 { return p.head }

// Index returns the free-running index of the first frame the next Next
// returns (after releasing the previous ones, the index of the first held
// frame plus the number held).
func (c *Consumer) Index() uint64 { return c.tail + uint64(c.held) }
