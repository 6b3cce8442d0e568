//go:build linux

package xsk

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/wpg-dev/wpg/internal/sys"
)

// AF_XDP, see the kernel's Documentation/networking/af_xdp.rst and
// include/uapi/linux/if_xdp.h. XDP sockets need Linux 4.18; need_wakeup
// 5.4; XDP_MAX_TX_SKB_BUDGET 6.17 (optional: older kernels take 32
// descriptors per copy-mode kick).

// Mode is how a socket binds to its queue.
type Mode int

// Bind modes.
const (
	// Auto lets the kernel choose: zero-copy where the driver has it,
	// else copy mode (no error either way; ZeroCopy reports the outcome).
	Auto Mode = iota
	// ZeroCopy insists on zero-copy (XDP_ZEROCOPY): EOPNOTSUPP where the
	// driver lacks it.
	ZeroCopy
	// Copy forces copy mode (XDP_COPY).
	Copy
)

// ErrStage wraps a failed step of Open with the step's name, so that the
// caller can tell a refused socket from a refused UMEM or bind.
type ErrStage struct {
	Stage string // "socket", "umem", "ring", "mmap", "bind", "budget"
	Op    string // the call, e.g. "setsockopt(XDP_UMEM_REG)"
	Err   error  // the system error (*os.SyscallError)
}

func (e *ErrStage) Error() string { return e.Op + ": " + e.Err.Error() }

// Unwrap returns the system error.
func (e *ErrStage) Unwrap() error { return e.Err }

// StageOf returns the stage of Open that err failed in ("" when err is not
// an ErrStage).
func StageOf(err error) string {
	var st *ErrStage
	if errors.As(err, &st) {
		return st.Stage
	}
	return ""
}

func stageErr(stage, op, call string, err error) error {
	return &ErrStage{Stage: stage, Op: op, Err: os.NewSyscallError(call, err)}
}

// Config describes one AF_XDP socket.
type Config struct {
	Ifindex int
	Queue   int
	// ChunkSize is the size of a UMEM chunk: a power of two from 2048 to
	// the page size.
	ChunkSize int
	// Chunks is the number of UMEM chunks.
	Chunks int
	// Ring sizes in entries (powers of two). Fill and Comp must be set;
	// at least one of TX and RX.
	Fill, Comp, TX, RX int
	Mode               Mode
	NeedWakeup         bool
	// NUMANode, when >= 0, is the node the UMEM is preferred on
	// (mbind MPOL_PREFERRED before the pages are touched).
	NUMANode int
	// TxBudget, when > 0, is XDP_MAX_TX_SKB_BUDGET: how many descriptors
	// one copy-mode kick sends. Kernels without the option keep 32.
	TxBudget int
	// BusyPoll sets SO_PREFER_BUSY_POLL, SO_BUSY_POLL (BusyPollUsecs) and
	// SO_BUSY_POLL_BUDGET (BusyPollBudget) where the kernel has them.
	BusyPoll       bool
	BusyPollUsecs  int
	BusyPollBudget int
	// BindRetry is how long a bind refused with EBUSY is retried: a
	// socket closed on the same queue keeps it for a moment (the kernel
	// releases its buffer pool later).
	BindRetry time.Duration
}

// ring is the part of the four rings they share: the producer and consumer
// indices and the flags word in the mapping, and this side's copy of the
// index it owns.
type ring struct {
	prod, cons, flags *uint32
	mask              uint32
	size              uint32
	mem               []byte // the mapping
	local             uint32 // producer rings: next producer; consumer rings: next consumer
	cached            uint32 // producer rings: consumer seen last; consumer rings: producer seen last
}

// free returns how many entries a producer ring can take now, reading
// the kernel's consumer index only when the cached one says fewer than
// want (cached holds consumer+size).
func (r *ring) free(want int) int {
	free := r.cached - r.local
	if free < uint32(want) {
		r.cached = atomic.LoadUint32(r.cons) + r.size
		free = r.cached - r.local
	}
	return int(free)
}

// avail returns how many entries of a consumer ring the kernel has
// produced and this side not yet taken, reading the kernel's producer
// index only when the cached one says none.
func (r *ring) avail() int {
	avail := r.cached - r.local
	if avail == 0 {
		r.cached = atomic.LoadUint32(r.prod)
		avail = r.cached - r.local
	}
	return int(avail)
}

// consumed hands the first n available entries back to the kernel (with
// no store when n is 0).
func (r *ring) consumed(n int) {
	if n == 0 {
		return
	}
	r.local += uint32(n)
	atomic.StoreUint32(r.cons, r.local)
}

// Socket is one bound AF_XDP socket with its own UMEM.
type Socket struct {
	fd        sys.FD
	fdi       int
	umem      *sys.Mapping
	mem       []byte
	chunk     int
	fill      ring
	fillAddr  []uint64
	comp      ring
	compAddr  []uint64
	tx        ring
	txDesc    []unix.XDPDesc
	rx        ring
	rxDesc    []unix.XDPDesc
	zeroCopy  bool
	wakeup    bool
	budget    int    // XDP_MAX_TX_SKB_BUDGET in effect (0: kernel default)
	budgetErr string // why it could not be set
	busyPoll  string // what busy polling got
	numa      string // where the UMEM went
	kicks     uint64
	kickAgain uint64 // kicks answered EAGAIN / ENOBUFS / EBUSY
	pollfd    [1]unix.PollFd
}

func isPow2(n int) bool { return n > 0 && n&(n-1) == 0 }

// Open creates, sets up and binds the socket. On error nothing is left
// open or mapped.
func Open(c Config) (*Socket, error) {
	page := os.Getpagesize()
	switch {
	case c.ChunkSize < 2048 || c.ChunkSize > page || !isPow2(c.ChunkSize):
		return nil, fmt.Errorf("AF_XDP: UMEM chunk of %d bytes: must be a power of two from 2048 to %d", c.ChunkSize, page)
	case c.Chunks < 1 || int64(c.Chunks)*int64(c.ChunkSize) > 1<<40:
		return nil, fmt.Errorf("AF_XDP: %d UMEM chunks: out of range", c.Chunks)
	case !isPow2(c.Fill) || !isPow2(c.Comp) || (c.TX != 0 && !isPow2(c.TX)) || (c.RX != 0 && !isPow2(c.RX)) || c.TX+c.RX == 0:
		return nil, fmt.Errorf("AF_XDP: ring sizes fill %d, completion %d, tx %d, rx %d: each a power of two (fill and completion required, and tx or rx)", c.Fill, c.Comp, c.TX, c.RX)
	}
	fd, err := unix.Socket(unix.AF_XDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, stageErr("socket", "socket(AF_XDP, SOCK_RAW)", "socket", err)
	}
	s := &Socket{fd: sys.OwnFD(fd), fdi: fd, chunk: c.ChunkSize}
	if err := s.setup(c); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Socket) setInt(level, opt, v int) error {
	if err := unix.SetsockoptInt(s.fdi, level, opt, v); err != nil {
		return os.NewSyscallError("setsockopt", err)
	}
	return nil
}

// umemReg is struct xdp_umem_reg with its full 32 bytes (the tail zeroed:
// kernels between 6.8 and the 2024 fix read tx_metadata_len unconditionally).
type umemReg struct {
	addr       uint64
	length     uint64
	chunkSize  uint32
	headroom   uint32
	flags      uint32
	txMetadata uint32
}

func (s *Socket) setup(c Config) error {
	size := c.Chunks * c.ChunkSize
	m, err := sys.MapAnonLazy(size, false)
	if err != nil {
		return &ErrStage{Stage: "umem", Op: "UMEM", Err: err}
	}
	s.umem, s.mem = m, m.Bytes()
	s.numa = "no node (the interface reports none)"
	if c.NUMANode >= 0 {
		if err := mbindPreferred(s.mem, c.NUMANode); err != nil {
			s.numa = fmt.Sprintf("not placed: mbind(MPOL_PREFERRED, node %d): %v", c.NUMANode, err)
		} else {
			s.numa = fmt.Sprintf("preferred on node %d (mbind MPOL_PREFERRED)", c.NUMANode)
		}
	}
	// Touch every page now, on this thread, after mbind: the pages come
	// from the preferred node, and no fault happens in the hot loop.
	for i := 0; i < len(s.mem); i += os.Getpagesize() {
		s.mem[i] = 0
	}
	reg := umemReg{addr: uint64(uintptr(unsafe.Pointer(&s.mem[0]))), length: uint64(size), chunkSize: uint32(c.ChunkSize)}
	if _, _, e := unix.Syscall6(unix.SYS_SETSOCKOPT, uintptr(s.fdi), unix.SOL_XDP, unix.XDP_UMEM_REG, uintptr(unsafe.Pointer(&reg)), unsafe.Sizeof(reg), 0); e != 0 {
		return stageErr("umem", fmt.Sprintf("setsockopt(XDP_UMEM_REG, %d bytes)", size), "setsockopt", e)
	}
	for _, r := range []struct {
		opt, n int
		name   string
	}{
		{unix.XDP_UMEM_FILL_RING, c.Fill, "XDP_UMEM_FILL_RING"},
		{unix.XDP_UMEM_COMPLETION_RING, c.Comp, "XDP_UMEM_COMPLETION_RING"},
		{unix.XDP_TX_RING, c.TX, "XDP_TX_RING"},
		{unix.XDP_RX_RING, c.RX, "XDP_RX_RING"},
	} {
		if r.n == 0 {
			continue
		}
		if err := s.setInt(unix.SOL_XDP, r.opt, r.n); err != nil {
			return &ErrStage{Stage: "ring", Op: fmt.Sprintf("setsockopt(%s, %d)", r.name, r.n), Err: err}
		}
	}
	if c.TX > 0 && c.TxBudget > 0 {
		if err := s.setInt(unix.SOL_XDP, unix.XDP_MAX_TX_SKB_BUDGET, c.TxBudget); err != nil {
			s.budgetErr = fmt.Sprintf("XDP_MAX_TX_SKB_BUDGET %d refused (%v): the kernel sends 32 descriptors per kick", c.TxBudget, err)
		} else {
			s.budget = c.TxBudget
		}
	}
	var off unix.XDPMmapOffsets
	ol := uint32(unsafe.Sizeof(off))
	if _, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(s.fdi), unix.SOL_XDP, unix.XDP_MMAP_OFFSETS, uintptr(unsafe.Pointer(&off)), uintptr(unsafe.Pointer(&ol)), 0); e != 0 {
		return stageErr("ring", "getsockopt(XDP_MMAP_OFFSETS)", "getsockopt", e)
	}
	if err := s.fill.mapRing(s.fdi, off.Fr, c.Fill, 8, unix.XDP_UMEM_PGOFF_FILL_RING); err != nil {
		return err
	}
	s.fillAddr = unsafe.Slice((*uint64)(unsafe.Pointer(&s.fill.mem[off.Fr.Desc])), c.Fill)
	if err := s.comp.mapRing(s.fdi, off.Cr, c.Comp, 8, unix.XDP_UMEM_PGOFF_COMPLETION_RING); err != nil {
		return err
	}
	s.compAddr = unsafe.Slice((*uint64)(unsafe.Pointer(&s.comp.mem[off.Cr.Desc])), c.Comp)
	if c.TX > 0 {
		if err := s.tx.mapRing(s.fdi, off.Tx, c.TX, 16, unix.XDP_PGOFF_TX_RING); err != nil {
			return err
		}
		s.txDesc = unsafe.Slice((*unix.XDPDesc)(unsafe.Pointer(&s.tx.mem[off.Tx.Desc])), c.TX)
		s.tx.cached = s.tx.size // producer ring: everything free
	}
	if c.RX > 0 {
		if err := s.rx.mapRing(s.fdi, off.Rx, c.RX, 16, unix.XDP_PGOFF_RX_RING); err != nil {
			return err
		}
		s.rxDesc = unsafe.Slice((*unix.XDPDesc)(unsafe.Pointer(&s.rx.mem[off.Rx.Desc])), c.RX)
	}
	s.fill.cached = s.fill.size
	if c.BusyPoll {
		s.busyPoll = s.setBusyPoll(c.BusyPollUsecs, c.BusyPollBudget)
	}
	flags := uint16(0)
	if c.NeedWakeup {
		flags |= unix.XDP_USE_NEED_WAKEUP
	}
	switch c.Mode {
	case ZeroCopy:
		flags |= unix.XDP_ZEROCOPY
	case Copy:
		flags |= unix.XDP_COPY
	}
	sa := &unix.SockaddrXDP{Flags: flags, Ifindex: uint32(c.Ifindex), QueueID: uint32(c.Queue)}
	deadline := time.Now().Add(c.BindRetry)
	for {
		err := unix.Bind(s.fdi, sa)
		if err == nil {
			break
		}
		if err == unix.EBUSY && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		return stageErr("bind", fmt.Sprintf("bind(ifindex %d, queue %d)", c.Ifindex, c.Queue), "bind", err)
	}
	s.wakeup = c.NeedWakeup
	var opts struct{ flags uint32 }
	ol = uint32(unsafe.Sizeof(opts))
	if _, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(s.fdi), unix.SOL_XDP, unix.XDP_OPTIONS, uintptr(unsafe.Pointer(&opts)), uintptr(unsafe.Pointer(&ol)), 0); e == 0 {
		s.zeroCopy = opts.flags&unix.XDP_OPTIONS_ZEROCOPY != 0
	} else {
		s.zeroCopy = c.Mode == ZeroCopy
	}
	s.pollfd[0] = unix.PollFd{Fd: int32(s.fdi)}
	return nil
}

// setBusyPoll sets the three busy-poll options and says what took.
func (s *Socket) setBusyPoll(usecs, budget int) string {
	if usecs <= 0 {
		usecs = 20
	}
	if budget <= 0 {
		budget = 64
	}
	var got, refused []string
	for _, o := range []struct {
		opt, v int
		name   string
	}{
		{unix.SO_PREFER_BUSY_POLL, 1, "SO_PREFER_BUSY_POLL"},
		{unix.SO_BUSY_POLL, usecs, "SO_BUSY_POLL"},
		{unix.SO_BUSY_POLL_BUDGET, budget, "SO_BUSY_POLL_BUDGET"},
	} {
		if err := s.setInt(unix.SOL_SOCKET, o.opt, o.v); err != nil {
			refused = append(refused, fmt.Sprintf("%s (%v)", o.name, err))
		} else {
			got = append(got, fmt.Sprintf("%s=%d", o.name, o.v))
		}
	}
	r := "on: " + joinComma(got)
	if len(got) == 0 {
		r = "off"
	}
	if len(refused) > 0 {
		r += "; refused: " + joinComma(refused)
	}
	return r
}

func joinComma(a []string) string {
	out := ""
	for i, s := range a {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}

func (r *ring) mapRing(fd int, off unix.XDPRingOffset, n, entry int, pgoff int64) error {
	size := int(off.Desc) + n*entry
	b, err := unix.Mmap(fd, pgoff, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return stageErr("mmap", fmt.Sprintf("mmap ring (offset %#x, %d bytes)", pgoff, size), "mmap", err)
	}
	r.mem = b
	r.prod = (*uint32)(unsafe.Pointer(&b[off.Producer]))
	r.cons = (*uint32)(unsafe.Pointer(&b[off.Consumer]))
	r.flags = (*uint32)(unsafe.Pointer(&b[off.Flags]))
	r.size = uint32(n)
	r.mask = uint32(n - 1)
	return nil
}

func (r *ring) unmap() error {
	if r.mem == nil {
		return nil
	}
	b := r.mem
	r.mem = nil
	if err := unix.Munmap(b); err != nil {
		return os.NewSyscallError("munmap", err)
	}
	return nil
}

// mbindPreferred asks the kernel to take b's pages from node (MPOL_PREFERRED).
func mbindPreferred(b []byte, node int) error {
	if node < 0 || node >= 1024 {
		return fmt.Errorf("node %d out of range", node)
	}
	var mask [16]uint64
	mask[node/64] = 1 << (node % 64)
	_, _, e := unix.Syscall6(unix.SYS_MBIND, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), unix.MPOL_PREFERRED,
		uintptr(unsafe.Pointer(&mask[0])), uintptr(len(mask)*64), 0)
	if e != 0 {
		return os.NewSyscallError("mbind", e)
	}
	return nil
}

// Close unbinds the socket and unmaps the rings and the UMEM; it is
// idempotent.
func (s *Socket) Close() error {
	var first error
	keep := func(err error) {
		if first == nil && err != nil {
			first = err
		}
	}
	for _, r := range []*ring{&s.tx, &s.rx, &s.fill, &s.comp} {
		keep(r.unmap())
	}
	s.txDesc, s.rxDesc, s.fillAddr, s.compAddr = nil, nil, nil, nil
	keep(s.fd.Close())
	s.fdi = -1
	// The UMEM goes last: the kernel drops its pin when the socket goes.
	keep(s.umem.Close())
	s.mem = nil
	return first
}

// FD is the socket's descriptor (for the XSKMAP); -1 after Close.
func (s *Socket) FD() int { return s.fdi }

// UMEM is the registered memory; chunk i starts at i*ChunkSize.
func (s *Socket) UMEM() []byte { return s.mem }

// ChunkSize is the size of a UMEM chunk.
func (s *Socket) ChunkSize() int { return s.chunk }

// ZeroCopy reports whether the kernel bound the socket in zero-copy mode.
func (s *Socket) ZeroCopy() bool { return s.zeroCopy }

// TxBudget is the XDP_MAX_TX_SKB_BUDGET in effect (0: the kernel's
// default of 32) and, when it was refused, why.
func (s *Socket) TxBudget() (int, string) { return s.budget, s.budgetErr }

// BusyPoll says what the busy-poll options got ("" when not asked).
func (s *Socket) BusyPoll() string { return s.busyPoll }

// NUMA says where the UMEM was placed.
func (s *Socket) NUMA() string { return s.numa }

// Kicks returns the number of kicks (sendto/recvfrom wake-ups) and how
// many of them the kernel answered "try again" (EAGAIN, ENOBUFS, EBUSY).
func (s *Socket) Kicks() (kicks, again uint64) { return s.kicks, s.kickAgain }

// Stats are the socket's kernel counters (struct xdp_statistics of
// getsockopt XDP_STATISTICS): RxDropped frames the socket dropped (no
// fill-ring buffer for them, or too long for a chunk), RxInvalid and
// TxInvalid descriptors the kernel refused, RxRingFull frames dropped
// for a full RX ring, RxFillEmpty and TxRingEmpty the times the kernel
// found the fill ring or the TX ring empty.
type Stats struct {
	RxDropped, RxInvalid, TxInvalid, RxRingFull, RxFillEmpty, TxRingEmpty uint64
	// Ring says whether the kernel counts RxRingFull, RxFillEmpty and
	// TxRingEmpty (Linux 5.9 on): an older one returns a struct of the
	// first three counters only, and the others read 0.
	Ring bool
}

// Add adds o's counters to s; the sum has the ring counters where both
// had them.
func (s *Stats) Add(o Stats) {
	s.RxDropped += o.RxDropped
	s.RxInvalid += o.RxInvalid
	s.TxInvalid += o.TxInvalid
	s.RxRingFull += o.RxRingFull
	s.RxFillEmpty += o.RxFillEmpty
	s.TxRingEmpty += o.TxRingEmpty
	s.Ring = s.Ring && o.Ring
}

// Stats reads the kernel's counters.
func (s *Socket) Stats() (Stats, error) {
	var st unix.XDPStatistics
	ol := uint32(unsafe.Sizeof(st))
	if _, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(s.fdi), unix.SOL_XDP, unix.XDP_STATISTICS, uintptr(unsafe.Pointer(&st)), uintptr(unsafe.Pointer(&ol)), 0); e != 0 {
		return Stats{}, os.NewSyscallError("getsockopt(XDP_STATISTICS)", e)
	}
	return Stats{RxDropped: st.Rx_dropped, RxInvalid: st.Rx_invalid_descs, TxInvalid: st.Tx_invalid_descs,
		RxRingFull: st.Rx_ring_full, RxFillEmpty: st.Rx_fill_ring_empty_descs, TxRingEmpty: st.Tx_ring_empty_descs,
		Ring: ol >= uint32(unsafe.Sizeof(st))}, nil
}

func (s *Socket) wait(ev int16, timeout time.Duration) error {
	s.pollfd[0].Events, s.pollfd[0].Revents = ev, 0
	ms := int(timeout.Milliseconds())
	if timeout > 0 && ms == 0 {
		ms = 1
	}
	if _, err := unix.Poll(s.pollfd[:], ms); err != nil && err != unix.EINTR {
		return os.NewSyscallError("poll", err)
	}
	if s.pollfd[0].Revents&(unix.POLLERR|unix.POLLNVAL) != 0 {
		serr, err := unix.GetsockoptInt(s.fdi, unix.SOL_SOCKET, unix.SO_ERROR)
		if err == nil && serr != 0 {
			return os.NewSyscallError("poll", unix.Errno(serr))
		}
	}
	return nil
}

// Probe reports whether the kernel has AF_XDP sockets: it opens one and
// closes it. EAFNOSUPPORT means no CONFIG_XDP_SOCKETS.
func Probe() error {
	fd, err := unix.Socket(unix.AF_XDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("socket(AF_XDP)", err)
	}
	unix.Close(fd)
	return nil
}

// IsNoFamily reports whether err says the kernel has no AF_XDP sockets.
func IsNoFamily(err error) bool { return errors.Is(err, unix.EAFNOSUPPORT) }

// IsBusy reports whether err is EBUSY (queue in use).
func IsBusy(err error) bool { return errors.Is(err, unix.EBUSY) }

// IsNotSupported reports whether err is EOPNOTSUPP (zero-copy on a driver
// without it).
func IsNotSupported(err error) bool {
	return errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOTSUP)
}

// IsNoBufs reports whether err is ENOBUFS (UMEM registration: over
// RLIMIT_MEMLOCK) or ENOMEM.
func IsNoBufs(err error) bool { return errors.Is(err, unix.ENOBUFS) || errors.Is(err, unix.ENOMEM) }

// IsInvalid reports whether err is EINVAL.
func IsInvalid(err error) bool { return errors.Is(err, unix.EINVAL) }

// IsDown reports whether err says the device is down or gone.
func IsDown(err error) bool { return errors.Is(err, unix.ENETDOWN) || errors.Is(err, unix.ENXIO) }
