//go:build linux

package cma

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/memread"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/peer"
	"github.com/wpg-dev/wpg/shmring"
)

// open opens the backend for one job: a sender per worker and a
// receiver, each from the options alone.
var open = backend.Factories{Sender: newSender, Receiver: newReceiver}.Open

// The staging slots and receive buffers are on transparent huge pages
// (sys.AllocHuge): process_vm_readv pins the pages of both sides and
// copies page by page, and on 2 MiB pages the same copy runs far faster
// (the C reference `cma -m readv` on this project's test VM: 29–34 GB/s
// with -H, its huge page option, against 16–22 without at 460,800 B, 17–24
// against 11–16 at 1 MiB); wpg's verified receiver needs the headroom for
// its CRC-32C.

// stride is the staging slot stride (peer.SlotStride).
func stride(maxFrame int) int { return peer.SlotStride(maxFrame) }

// Frames of cacheMinFrame … cacheMaxFrame stride get a cache-sized
// pipeline: two staging slots and one frame per process_vm_readv, so that
// what the receiver copies from stays in its L2 from frame to frame (the
// sender rewrites only the header and the stamps of a slot it reuses). With
// 4 MiB of staging (16 slots of 460,800 B) the copy read lines that had
// left the receiver's L2: perf measured twice the CPU per byte in
// _copy_to_iter (1.6–1.8 against 0.8 % of samples per GB moved), and at
// 1 MiB two slots moved 11.9–12.2 GB/s against 9.0–10.8 with four
// (--verify off, alternated). Larger and smaller frames keep
// stagingBudget and copyBudget.
const (
	cacheMinFrame = 128 << 10
	cacheMaxFrame = 2<<20 + 64
)

// cacheSized reports whether frames of maxFrame bytes get the
// cache-sized pipeline: two staging slots, one frame per call.
func cacheSized(maxFrame int) bool {
	st := stride(maxFrame)
	return st >= cacheMinFrame && st <= cacheMaxFrame
}

// slotsFor returns the descriptor ring's entry count, one per staging
// slot: want when given (1 is rounded up to the ring's two entries, and
// the sender then uses one staging slot), two for cache-sized frames, else
// stagingBudget bytes of slots (4 MiB).
func slotsFor(maxFrame, want int) int {
	if want <= 0 && cacheSized(maxFrame) {
		return 2
	}
	return peer.SlotCount(maxFrame, want, stagingBudget, maxSlots)
}

type sender struct {
	peer.RingSender
	staging  *sys.Mapping
	stride   int
	maxFrame int
	staged   int // staging slots (the ring's entries, or 1: --slots 1)
	slots    peer.Slots
	// writev mode: the sender pushes each frame into the receiver's slot.
	writev     bool
	remoteBase uintptr
	remoteStr  int
	pvm        *sys.PVMBatch
	locals     [][]byte
	remotes    []uintptr
}

func newSender(ctx context.Context, o backend.Options) (backend.Sender, error) {
	if err := o.NeedMaxFrame("cma"); err != nil {
		return nil, err
	}
	writev, err := modeOf(o.Mem.RecvMode)
	if err != nil {
		return nil, err
	}
	if err := sys.AllowAnyPtracer(); err != nil {
		return nil, backend.ErrorfAt("cma", "sender", "let the receiver read our memory: %w", err)
	}
	ring, err := shmring.Create(shmring.Config{Slots: slotsFor(o.MaxFrame, o.Mem.Slots), SlotSize: 8})
	if err != nil {
		return nil, backend.ErrorfAt("cma", "sender", "%w", err)
	}
	s := &sender{maxFrame: o.MaxFrame, stride: stride(o.MaxFrame), writev: writev, staged: ring.Slots()}
	s.Ring = ring
	if o.Mem.Slots == 1 && !writev {
		// One staging slot (the ring has two entries at least): a frame
		// is rendered only once the receiver has copied the one before.
		s.staged = 1
	}
	s.staging, err = sys.AllocHuge(s.staged*s.stride, fmt.Sprintf("the staging slots (%d × %d bytes)", s.staged, s.stride))
	if err != nil {
		ring.Close()
		return nil, backend.ErrorfAt("cma", "sender", "%w", err)
	}
	s.Release = s.staging.Close
	h := peer.Hello{MaxFrame: o.MaxFrame, Slots: s.staged, Addr: uint64(sys.AddrOf(s.staging.Bytes())), Len: s.stride, Mode: "readv"}
	if writev {
		h.Mode = "writev"
	}
	rh, err := s.Open(ctx, "cma", o, peer.RecvRequest{}, h, "were taken")
	if err != nil {
		s.Discard()
		return nil, err
	}
	if writev {
		if rh.Addr == 0 || rh.Len < s.maxFrame {
			s.Abort()
			s.Discard()
			return nil, backend.ErrorfAt("cma", fmt.Sprintf("sender (%s)", s.Where), "the receiver did not announce its buffers (an older wpg?)")
		}
		s.remoteBase, s.remoteStr = uintptr(rh.Addr), rh.Len
		s.pvm = sys.NewPVMBatch(1024)
		s.locals = make([][]byte, 1024)
		s.remotes = make([]uintptr, 1024)
	}
	s.slots = peer.Slots{Name: "cma", Ring: ring, Prod: s.Prod, Mem: s.staging.Bytes(), Stride: s.stride,
		MaxFrame: s.maxFrame, Wait: peer.WaitSlice, PeerGone: s.PeerGone, Staging: s.staged}
	return s, nil
}

// Reserve hands out the staging slots the receiver will read.
func (s *sender) Reserve(bufs [][]byte) (int, error) { return s.slots.Reserve(bufs) }

func (s *sender) Commit(lens []int) (int, error) {
	n := min(len(lens), s.slots.Reserved())
	if s.writev && n > 0 {
		// Push the frames into the receiver's slots, then publish them.
		mem := s.staging.Bytes()
		for done := 0; done < n; {
			k := min(n-done, len(s.locals))
			for i := 0; i < k; i++ {
				off := s.slots.Offset(done + i)
				s.locals[i] = mem[off : off+lens[done+i]]
				s.remotes[i] = s.remoteBase + uintptr(s.slots.Slot(done+i)*s.remoteStr)
			}
			if err := s.pvm.Transfer(s.PeerPID, true, s.locals[:k], s.remotes[:k]); err != nil {
				if g := s.PeerGone(); g != nil || sys.IsESRCH(err) {
					if g == nil {
						g = backend.Errorf("cma", "the receiver (pid %d) has gone: %w", s.PeerPID, err)
					}
					return 0, g
				}
				return 0, backend.Errorf("cma", "%w", permHint(err))
			}
			done += k
		}
	}
	n = s.slots.Publish(lens[:n])
	s.Frames += uint64(n)
	return n, nil
}

func (s *sender) MaxFrame() int { return s.maxFrame }

func (s *sender) Info() backend.Info {
	d := s.Details(map[string]string{
		"staging_slots": strconv.Itoa(s.staged),
		"slot_stride":   strconv.Itoa(s.stride),
		"frames":        strconv.FormatUint(s.Frames, 10),
		"transfer":      "receiver pulls with process_vm_readv; descriptors through a memfd ring",
	})
	if scope, ok := sys.YamaPtraceScope(); ok {
		d["yama_ptrace_scope"] = strconv.Itoa(scope)
	} else {
		d["yama_ptrace_scope"] = "no Yama"
	}
	mode := "readv"
	if s.writev {
		mode = "writev"
		d["transfer"] = "sender pushes with process_vm_writev into the receiver's slots; descriptors through a memfd ring"
		if s.pvm != nil {
			d["calls"] = strconv.FormatUint(s.pvm.Calls, 10)
		}
	}
	return backend.Info{Backend: "cma", Mode: mode, NUMANode: -1, RingDepth: s.Ring.Slots(), Details: d}
}

type receiver struct {
	peer.RingReceiver
	base     uintptr
	stride   int
	slots    uint64
	staged   uint64 // the sender's staging slots (readv): the hello's, at most slots
	maxFrame int
	mem      *sys.Mapping
	perCall  int
	dviews   [][]byte
	locals   [][]byte
	remotes  []uintptr
	pvm      *sys.PVMBatch
	// writev mode: the sender writes into our slots (slots × stride).
	writev bool
	slotsM *sys.Mapping
	// sum: the receiver computes each payload's CRC-32C chunk by chunk
	// right after the kernel copied the chunk (recv.PayloadSummer).
	sum  bool
	sums []frame.PayloadCRC
}

// sumChunk is the piece of a frame that one process_vm_readv copies when
// the receiver sums payloads: small enough that the CRC-32C reads it from
// L2 right after the copy wrote it, instead of a second pass over a whole
// frame whose first lines have left the cache (at 1 MiB, source and
// destination fill the 2 MiB L2), large enough that the calls stay few.
const sumChunk = 256 << 10

// SumPayloads turns on the CRC-32C per copied chunk (recv.PayloadSummer)
// for frames of cacheMinFrame bytes or more read with process_vm_readv,
// one frame per call; smaller frames, and frames the sender writes into
// our slots (read in place), are left to the decoder.
func (r *receiver) SumPayloads() bool {
	if r.writev || r.perCall != 1 || r.maxFrame < cacheMinFrame {
		return false
	}
	r.sum = true
	r.sums = make([]frame.PayloadCRC, 1)
	return true
}

// PayloadSums returns the CRCs of the frames of the last Next.
func (r *receiver) PayloadSums() []frame.PayloadCRC { return r.sums }

// readSummed copies the frame of l bytes at remote into local (len l) in
// sumChunk pieces and folds each piece's payload bytes into the CRC-32C
// right after its copy. When the first piece shows a frame without a
// checksum (sent with --verify off) or no payload header, the rest is
// copied in one call and the result is not valid: the decoder checks it.
// The staging slot goes back to the sender as soon as the last piece has
// arrived, before its CRC, so that the sender renders into it meanwhile.
func (r *receiver) readSummed(local []byte, remote uintptr) (frame.PayloadCRC, error) {
	var c frame.PayloadCRC
	l := len(local)
	for off := 0; off < l; {
		end := min(off+sumChunk, l)
		if off > 0 && !c.Valid {
			end = l
		}
		r.locals[0], r.remotes[0] = local[off:end], remote+uintptr(off)
		if err := r.pvm.Transfer(r.PID, false, r.locals[:1], r.remotes[:1]); err != nil {
			return c, err
		}
		if end == l {
			r.Cons.Release()
		}
		if off == 0 {
			c.Valid = frame.PayloadHasChecksum(local[:end])
			off = frame.PayloadHeaderLen
		}
		if c.Valid && end > off {
			c.Sum = memread.CRC32C(c.Sum, local[off:end])
		}
		off = end
	}
	return c, nil
}

func newReceiver(ctx context.Context, o backend.Options) (backend.Receiver, error) {
	r := &receiver{}
	m, err := r.Meet(ctx, "cma", o)
	if err != nil {
		return nil, err
	}
	h := m.Hello
	fail := func(err error) (backend.Receiver, error) { return nil, m.Refuse(err) }
	if len(m.Fds) != 1 || h.Addr == 0 || h.Len <= 0 || h.MaxFrame <= 0 {
		return fail(errors.New("incomplete cma hello from the sender"))
	}
	if h.MaxFrame > peer.MaxFrameLen {
		return fail(fmt.Errorf("the sender announced frames of %d bytes: want 1 … %d", h.MaxFrame, peer.MaxFrameLen))
	}
	if err := r.OpenRing(m); err != nil {
		return fail(err)
	}
	ring := r.Ring
	r.base, r.stride, r.slots, r.maxFrame, r.writev = uintptr(h.Addr), h.Len, uint64(ring.Slots()), h.MaxFrame, h.Mode == "writev"
	r.Release = func() error {
		r.mem.Close()
		r.slotsM.Close()
		return nil
	}
	r.staged = r.slots
	if h.Slots >= 1 && h.Slots < ring.Slots() {
		r.staged = uint64(h.Slots)
	}
	if r.writev {
		// The sender pushes frames into our slots: let it (Yama scope 1),
		// and tell it where they are.
		if err := sys.AllowAnyPtracer(); err != nil {
			ring.Close()
			return fail(err)
		}
		st := stride(h.MaxFrame)
		if r.slotsM, err = sys.AllocHuge(ring.Slots()*st, fmt.Sprintf("the receive slots (%d × %d bytes)", ring.Slots(), st)); err != nil {
			ring.Close()
			return fail(err)
		}
		r.stride = st
		r.perCall = 1024
		r.dviews = make([][]byte, r.perCall)
		if err := r.Answer(peer.Hello{Mode: "writev", Addr: uint64(sys.AddrOf(r.slotsM.Bytes())), Len: st}); err != nil {
			return nil, err
		}
		return r, nil
	}
	if h.Len != stride(h.MaxFrame) {
		ring.Close()
		return fail(fmt.Errorf("the sender's slot stride %d is not %d (a different wpg version?)", h.Len, stride(h.MaxFrame)))
	}
	r.perCall = max(1, min(copyBudget/h.MaxFrame, 1024))
	if cacheSized(h.MaxFrame) {
		r.perCall = 1 // see cacheMinFrame
	}
	if r.mem, err = sys.AllocHuge(r.perCall*r.stride, fmt.Sprintf("the receive buffers (%d × %d bytes)", r.perCall, r.stride)); err != nil {
		ring.Close()
		return fail(err)
	}
	// Probe the permission now, so that a refusal is reported at once
	// with its fix instead of after the first frame.
	probe := make([]byte, 1)
	if _, err := sys.ProcessVMReadv(r.PID, probe, r.base); err != nil {
		r.mem.Close()
		ring.Close()
		return fail(permHint(err))
	}
	r.pvm = sys.NewPVMBatch(r.perCall)
	r.dviews = make([][]byte, r.perCall)
	r.locals = make([][]byte, r.perCall)
	r.remotes = make([]uintptr, r.perCall)
	if err := r.Answer(peer.Hello{}); err != nil {
		return nil, err
	}
	return r, nil
}

func permHint(err error) error {
	if !sys.IsPermission(err) {
		return err
	}
	hint := "process_vm_readv/writev needs ptrace access to the peer process (same user and a dumpable peer, or CAP_SYS_PTRACE)"
	if scope, ok := sys.YamaPtraceScope(); ok {
		switch scope {
		case 2:
			hint = "Yama ptrace_scope is 2: the copying process needs CAP_SYS_PTRACE (setcap cap_sys_ptrace+ep, or run as root)"
		case 3:
			hint = "Yama ptrace_scope is 3: process_vm_readv/writev between processes is disabled on this system until reboot"
		}
	}
	return fmt.Errorf("%w (%s)", err, hint)
}

func (r *receiver) Next(views [][]byte, timeout time.Duration) (int, error) {
	want := min(len(views), r.perCall)
	n, err := peer.NextOrGone(r.Cons, r.dviews[:want], r.Gone, timeout)
	if n == 0 || err != nil {
		return 0, err
	}
	idx := r.Cons.Index() - uint64(n)
	if r.writev {
		// The frames are already in our slots; they stay valid until the
		// next call releases them.
		peer.SlotViews(views, r.dviews[:n], r.slotsM.Bytes(), idx, r.slots, r.stride, r.maxFrame)
		for _, v := range views[:n] {
			if !frame.PayloadHasChecksum(v) {
				frame.ReadPayload(v) // read in place: see shm
			}
		}
		r.Frames += uint64(n)
		return n, nil
	}
	// Frames in consecutive staging slots are read with one iovec per run
	// of slots (up to the ring's wrap), padding between frames included:
	// the kernel pins and copies one range instead of one per frame, and
	// local buffers use the same stride, so frame i lands at i*stride.
	mem := r.mem.Bytes()
	st := r.stride
	if r.sum && n == 1 {
		l := min(int(binary.LittleEndian.Uint64(r.dviews[0])), r.maxFrame)
		start := idx % r.staged
		c, err := r.readSummed(mem[:l], r.base+uintptr(int(start)*st))
		if err != nil {
			if sys.IsESRCH(err) {
				return 0, io.EOF // the sender has gone
			}
			return 0, permHint(err)
		}
		r.sums[0] = c
		views[0] = mem[:l:l]
		r.Cons.Release() // a no-op: readSummed released after the last piece (but an empty frame has none)
		r.Frames++
		return 1, nil
	}
	seg := 0
	for i := 0; i < n; {
		start := (idx + uint64(i)) % r.staged
		k := min(n-i, int(r.staged-start))
		last := min(int(binary.LittleEndian.Uint64(r.dviews[i+k-1])), r.maxFrame)
		r.locals[seg] = mem[i*st : (i+k-1)*st+last]
		r.remotes[seg] = r.base + uintptr(int(start)*st)
		seg++
		i += k
	}
	if err := r.pvm.Transfer(r.PID, false, r.locals[:seg], r.remotes[:seg]); err != nil {
		if sys.IsESRCH(err) {
			return 0, io.EOF // the sender has gone
		}
		return 0, permHint(err)
	}
	for i := 0; i < n; i++ {
		l := min(int(binary.LittleEndian.Uint64(r.dviews[i])), r.maxFrame)
		views[i] = mem[i*st : i*st+l : i*st+l]
	}
	r.Cons.Release()
	r.Frames += uint64(n)
	return n, nil
}

func (r *receiver) Info() backend.Info {
	if info, closed := r.Last(); closed {
		return info
	}
	d := r.Details(map[string]string{"per_call": strconv.Itoa(r.perCall)})
	if r.writev {
		d["transfer"] = "the sender writes into our slots with process_vm_writev; read in place"
		return backend.Info{Backend: "cma", Mode: "writev", NUMANode: -1, RingDepth: int(r.slots), Details: d}
	}
	d["transfer"] = "process_vm_readv from the sender's staging slots"
	if r.sum {
		d["payload_crc"] = "per copied chunk of " + strconv.Itoa(sumChunk) + " bytes"
	}
	d["calls"] = strconv.FormatUint(r.pvm.Calls, 10)
	if r.Frames > 0 {
		d["calls_per_frame"] = strconv.FormatFloat(float64(r.pvm.Calls)/float64(r.Frames), 'f', 3, 64)
	}
	return backend.Info{Backend: "cma", Mode: "readv", NUMANode: -1, RingDepth: int(r.slots), Details: d}
}

func (r *receiver) Close() error { return r.CloseWith(r.Info()) }
