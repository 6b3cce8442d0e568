//go:build linux

package udmabuf

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/dmabuf"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/inputerr"
	"github.com/wpg-dev/wpg/peer"
	"github.com/wpg-dev/wpg/shmring"
)

// instance is one job's buffer: mapped once, split into one window per
// worker.
type instance struct {
	ctx    context.Context
	o      backend.Options
	buf    *dmabuf.Buffer // nil on the receiving side
	stride int
	slots  int // per worker
	window int // bytes per worker
	mu     sync.Mutex
}

func open(ctx context.Context, o backend.Options) (backend.Instance, error) {
	inst := &instance{ctx: ctx, o: o}
	if o.Device.Device == "" {
		return inst, nil // the receiving side maps what its sender passes
	}
	if err := check(o); err != nil {
		return nil, err
	}
	if err := o.NeedMaxFrame("udmabuf"); err != nil {
		return nil, err
	}
	workers := max(1, o.Workers)
	inst.stride = peer.SlotStride(o.MaxFrame)
	opts := dmabuf.Options{Device: o.Device.Device, FS: dmabuf.FS{Sys: o.Device.SysRoot, Dev: o.Device.DevRoot},
		Sync: o.Device.Sync, SyncMode: o.Device.SyncMode}
	mainline := isMainline(opts)
	if mainline {
		inst.slots = pow2(max(peer.SlotCount(o.MaxFrame, o.Mem.Slots, budget/workers, maxSlots), 2))
		if o.Mem.Slots > 0 && inst.slots != o.Mem.Slots {
			return nil, backend.Errorf("udmabuf", "--slots %d: give a power of two (the ring of descriptors has one), e.g. %d", o.Mem.Slots, inst.slots)
		}
		opts.Size = int64(workers) * int64(inst.slots) * int64(inst.stride)
	}
	buf, err := dmabuf.Open(opts)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			// The text names the udev rule (or root): no capability helps.
			return nil, inputerr.WithFix(err, "run as root, or add the udev rule of docs/dmabuf.md")
		}
		return nil, err
	}
	inst.buf = buf
	if mainline {
		inst.window = inst.slots * inst.stride
		return inst, nil
	}
	fit := buf.Size / workers / inst.stride
	inst.slots = pow2(min(fit, maxSlots))
	if o.Mem.Slots > 0 {
		if o.Mem.Slots&(o.Mem.Slots-1) != 0 {
			buf.Close()
			return nil, backend.Errorf("udmabuf", "--slots %d: give a power of two (the ring of descriptors has one), e.g. %d", o.Mem.Slots, pow2(o.Mem.Slots))
		}
		if o.Mem.Slots > fit {
			buf.Close()
			return nil, backend.Errorf("udmabuf", "--slots %d: %s holds %d bytes, room for %d slots of %d bytes per worker (%d workers): lower --slots or --size", o.Mem.Slots, o.Device.Device, buf.Size, fit, inst.stride, workers)
		}
		inst.slots = o.Mem.Slots
	}
	if inst.slots < 2 {
		buf.Close()
		return nil, backend.Errorf("udmabuf", "%s holds %d bytes: too small for 2 slots of %d-byte frames per worker (%d workers): lower --size or --workers, or load the driver with a larger buffer", o.Device.Device, buf.Size, inst.stride, workers)
	}
	inst.window = inst.slots * inst.stride
	return inst, nil
}

// pow2 rounds n (at least 1) down to a power of two.
func pow2(n int) int {
	if n < 1 {
		return 0
	}
	return 1 << (bits.Len(uint(n)) - 1)
}

// isMainline tells whether o names the mainline driver (no u-dma-buf
// sysfs directory of that name, and the name udmabuf).
func isMainline(o dmabuf.Options) bool {
	name := o.Device[strings.LastIndexByte(o.Device, '/')+1:]
	_, found, _ := o.FS.Lookup(name)
	return !found && name == dmabuf.MainlineNode
}

func (in *instance) NewSender(w backend.Worker) (backend.Sender, error) {
	if in.buf == nil {
		return nil, backend.ErrorfAt("udmabuf", "sender", "no --device")
	}
	maxFrame := max(in.o.MaxFrame, w.MaxFrame)
	if maxFrame > in.stride {
		return nil, backend.ErrorfAt("udmabuf", "sender", "worker %d renders %d-byte frames, the slots hold %d", w.Index, maxFrame, in.stride)
	}
	if w.Index < 0 || (w.Index+1)*in.window > in.buf.Size {
		return nil, backend.ErrorfAt("udmabuf", "sender", "worker %d has no window in the %d-byte buffer", w.Index, in.buf.Size)
	}
	return newSender(in, w.Index, maxFrame)
}

func (in *instance) NewReceiver() (backend.Receiver, error) { return newReceiver(in.ctx, in.o) }

func (in *instance) Close() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.buf == nil {
		return nil
	}
	err := in.buf.Close()
	in.buf = nil
	return err
}

type sender struct {
	peer.RingSender
	in       *instance
	sy       *dmabuf.Syncer
	slots    peer.Slots
	offset   int // the worker's window in the buffer
	maxFrame int
	first    int // buffer offset of the last Reserve's first slot
	batches  uint64
}

// helloMode carries the sync method and the driver to the receiver.
func helloMode(b *dmabuf.Buffer) string { return b.SyncVia + ":" + b.Driver }

func newSender(in *instance, index, maxFrame int) (*sender, error) {
	b := in.buf
	s := &sender{in: in, offset: index * in.window, maxFrame: maxFrame, sy: b.NewSyncer()}
	var err error
	if s.Ring, err = shmring.Create(shmring.Config{Slots: in.slots, SlotSize: 8}); err != nil {
		return nil, backend.ErrorfAt("udmabuf", "sender", "%w", err)
	}
	if s.Ring.Slots() != in.slots {
		// shmring rounds up to a power of two: keep the descriptors in
		// step with the buffer's slots.
		s.Ring.Close()
		return nil, backend.ErrorfAt("udmabuf", "sender", "%d slots: internal error, the ring took %d", in.slots, s.Ring.Slots())
	}
	fds := []int{b.Fd()}
	if fd := b.SyncForCPUFd(); fd >= 0 {
		fds = append(fds, fd)
	}
	h := peer.Hello{MaxFrame: maxFrame, Slots: in.slots, Addr: uint64(s.offset), Len: in.stride, Mode: helloMode(b)}
	if _, err := s.Open(in.ctx, "udmabuf", in.o, peer.RecvRequest{}, h, "were taken", fds...); err != nil {
		s.Discard()
		return nil, err
	}
	mem := b.Bytes()[s.offset : s.offset+in.window]
	s.slots = peer.Slots{Name: "udmabuf", Ring: s.Ring, Prod: s.Prod, Mem: mem, Stride: in.stride,
		MaxFrame: maxFrame, Wait: peer.WaitSlice, PeerGone: s.PeerGone}
	return s, nil
}

// Reserve hands out slots of the worker's window in ring order, never
// across the window's end, so that one batch is one contiguous range for
// the sync calls.
func (s *sender) Reserve(bufs [][]byte) (int, error) {
	idx := int(s.Prod.Index() % uint64(s.in.slots))
	if room := s.in.slots - idx; len(bufs) > room {
		bufs = bufs[:room]
	}
	n, err := s.slots.Reserve(bufs)
	if n == 0 || err != nil {
		return n, err
	}
	s.first = s.offset + s.slots.Offset(0)
	if err := s.sy.BeginWrite(s.first, n*s.in.stride); err != nil {
		return 0, err
	}
	return n, nil
}

// Commit hands the written frames to the device side (sync_for_device or
// DMA_BUF_IOCTL_SYNC END) and then to the receiver.
func (s *sender) Commit(lens []int) (int, error) {
	n := min(len(lens), s.slots.Reserved())
	if s.slots.Reserved() > 0 {
		if err := s.sy.EndWrite(s.first, max(n, 1)*s.in.stride); err != nil {
			return 0, err
		}
		s.batches++
	}
	n = s.slots.Publish(lens)
	s.Frames += uint64(n)
	return n, nil
}

func (s *sender) MaxFrame() int { return s.maxFrame }

func (s *sender) Info() backend.Info {
	b := s.in.buf
	st := s.sy.Stats
	d := map[string]string{
		"driver":        b.Driver,
		"device":        b.Node,
		"buffer_bytes":  strconv.Itoa(b.Size),
		"cache_mode":    b.CacheMode,
		"sync":          b.SyncVia,
		"o_sync":        strconv.FormatBool(b.OSync),
		"window_offset": strconv.Itoa(s.offset),
		"window_bytes":  strconv.Itoa(s.in.window),
		"slots":         strconv.Itoa(s.in.slots),
		"slot_stride":   strconv.Itoa(s.in.stride),
		"frames":        strconv.FormatUint(s.Frames, 10),
		"batches":       strconv.FormatUint(s.batches, 10),
		"sync_calls":    strconv.FormatUint(st.Total(), 10),
		"render":        "in place (frames are written into the DMA buffer's slots)",
		"rendezvous":    "unix socket; the buffer's descriptor and a memfd ring of descriptors passed with SCM_RIGHTS",
	}
	if s.Frames > 0 {
		d["sync_calls_per_frame"] = strconv.FormatFloat(float64(st.Total())/float64(s.Frames), 'f', 4, 64)
	}
	if b.PhysAddr != nil {
		d["phys_addr"] = fmt.Sprintf("%#x", *b.PhysAddr)
	}
	if b.SyncMode != nil {
		d["sync_mode"] = strconv.Itoa(*b.SyncMode)
	}
	if b.SizeLimitMB != nil {
		d["size_limit_mb"] = strconv.FormatInt(*b.SizeLimitMB, 10)
	}
	if b.Coherent {
		d["dma_coherent"] = "1"
	}
	return backend.Info{Backend: "udmabuf", Mode: modeName(b), NUMANode: -1, RingDepth: s.in.slots, Details: s.Details(d)}
}

// modeName is the report's mode: the driver and how it is synced.
func modeName(b *dmabuf.Buffer) string {
	switch b.Driver {
	case dmabuf.DriverMainline:
		return "mainline"
	case dmabuf.DriverOld:
		return "u-dma-buf (old udmabuf) " + b.CacheMode
	}
	return "u-dma-buf " + b.CacheMode
}

type receiver struct {
	peer.RingReceiver
	buf      *dmabuf.Buffer
	sy       *dmabuf.Syncer
	offset   int
	stride   int
	slots    uint64
	maxFrame int
	dviews   [][]byte
	reading  bool // a BeginRead awaits its EndRead
	driver   string
}

func newReceiver(ctx context.Context, o backend.Options) (backend.Receiver, error) {
	if err := peer.NeedListen("udmabuf", o.Listen); err != nil {
		return nil, err
	}
	r := &receiver{}
	m, err := r.Meet(ctx, "udmabuf", o)
	if err != nil {
		return nil, err
	}
	h := m.Hello
	via, driver, _ := strings.Cut(h.Mode, ":")
	if len(m.Fds) < 2 || h.Len <= 0 || h.MaxFrame <= 0 || h.Slots <= 0 || h.MaxFrame > peer.MaxFrameLen || h.MaxFrame > h.Len || driver == "" {
		return nil, m.Refuse(errors.New("incomplete udmabuf hello from the sender"))
	}
	r.offset, r.stride, r.maxFrame, r.slots, r.driver = int(h.Addr), h.Len, h.MaxFrame, uint64(h.Slots), driver
	if err := r.OpenRing(m); err != nil {
		return nil, m.Refuse(err)
	}
	forCPU := -1
	if len(m.Fds) > 1 {
		forCPU = m.Fds[1]
	}
	size := r.offset + h.Slots*h.Len
	r.buf, err = dmabuf.Attach(m.Fds[0], size, driver, via, forCPU)
	m.Fds = nil // the buffer owns them, also when Attach fails
	if err != nil {
		r.Ring.Close()
		return nil, m.Refuse(err)
	}
	r.Release = r.buf.Close
	if uint64(r.Ring.Slots()) != r.slots {
		r.buf.Close()
		r.Ring.Close()
		return nil, m.Refuse(fmt.Errorf("the ring has %d slots, the hello says %d", r.Ring.Slots(), r.slots))
	}
	r.sy = r.buf.NewSyncer()
	r.dviews = make([][]byte, r.slots)
	if err := r.Answer(peer.Hello{}); err != nil {
		return nil, err
	}
	return r, nil
}

// Next returns views into the DMA buffer (no copy), made current for the
// CPU with the sync calls the sender's mode needs; the slots go back to the
// sender on the next call.
func (r *receiver) Next(views [][]byte, timeout time.Duration) (int, error) {
	if err := r.endRead(); err != nil {
		return 0, err
	}
	first := r.Cons.Index()
	idx := int(first % r.slots)
	want := min(len(views), len(r.dviews), int(r.slots)-idx) // one contiguous range
	n, err := peer.NextOrGone(r.Cons, r.dviews[:want], r.Gone, timeout)
	if n == 0 || err != nil {
		return 0, err
	}
	first = r.Cons.Index() - uint64(n)
	off := r.offset + int(first%r.slots)*r.stride
	if err := r.sy.BeginRead(off, n*r.stride); err != nil {
		return 0, err
	}
	r.reading = true
	mem := r.buf.Bytes()[r.offset:]
	peer.SlotViews(views, r.dviews[:n], mem, first, r.slots, r.stride, r.maxFrame)
	for _, v := range views[:n] {
		if !frame.PayloadHasChecksum(v) {
			frame.ReadPayload(v) // a consumer reads its data, also unverified
		}
	}
	r.Frames += uint64(n)
	return n, nil
}

func (r *receiver) endRead() error {
	if !r.reading {
		return nil
	}
	r.reading = false
	return r.sy.EndRead(0, 0)
}

func (r *receiver) Info() backend.Info {
	if info, closed := r.Last(); closed {
		return info
	}
	st := r.sy.Stats
	d := r.Details(map[string]string{
		"driver":        r.driver,
		"sync":          r.buf.SyncVia,
		"sync_calls":    strconv.FormatUint(st.Total(), 10),
		"window_offset": strconv.Itoa(r.offset),
		"transfer":      "in place in the DMA buffer, mapped from the descriptor the sender passed",
	})
	if r.Frames > 0 {
		d["sync_calls_per_frame"] = strconv.FormatFloat(float64(st.Total())/float64(r.Frames), 'f', 4, 64)
	}
	return backend.Info{Backend: "udmabuf", Mode: "in place", NUMANode: -1, RingDepth: int(r.slots), Details: d}
}

func (r *receiver) Close() error {
	if _, closed := r.Last(); closed {
		return nil
	}
	err := r.endRead()
	info := r.Info()
	// The frames of the last Next were consumed: give them back, so that
	// a sender draining its ring after a receiver that stopped at
	// --expect sees every frame taken.
	r.Cons.Release()
	if cerr := r.CloseWith(info); err == nil {
		err = cerr
	}
	return err
}
