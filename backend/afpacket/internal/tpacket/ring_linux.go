//go:build linux

package tpacket

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/wpg-dev/wpg/header"
	"github.com/wpg-dev/wpg/internal/sys"
)

// AF_PACKET: TPACKET_V3 TX and RX rings and sendmmsg, see the kernel's
// Documentation/networking/packet_mmap.rst. TX on TPACKET_V3 needs Linux
// 4.11; PACKET_IGNORE_OUTGOING needs 4.20; PACKET_QDISC_BYPASS 3.14.

// TPacket3HdrLen is the offset of frame data in a TPACKET_V3 TX slot
// (TPACKET_ALIGN(sizeof(struct tpacket3_hdr))).
const TPacket3HdrLen = 48

// Offsets in struct tpacket3_hdr.
const (
	tp3NextOffset = 0
	tp3Sec        = 4
	tp3Nsec       = 8
	tp3Snaplen    = 12
	tp3Len        = 16
	tp3Status     = 20
	tp3Mac        = 24
	tp3VlanTCI    = 32 // hv1.tp_vlan_tci (host order)
	tp3VlanTPID   = 36 // hv1.tp_vlan_tpid (host order)
)

// sllLen is the size of the struct sockaddr_ll after a ring header.
const sllLen = 20

// vlanTPID returns the tag's EtherType from the status word and the
// kernel's tpid field (802.1Q when the kernel does not say).
func vlanTPID(status uint32, tpid uint16) uint16 {
	if status&unix.TP_STATUS_VLAN_TPID_VALID != 0 && tpid != 0 {
		return tpid
	}
	return header.EtherTypeVLAN
}

// Offsets in struct tpacket_block_desc (version, offset_to_priv, then
// struct tpacket_hdr_v1).
const (
	bdStatus     = 8
	bdNumPkts    = 12
	bdFirstPkt   = 16
	sllPkttype   = 10 // sockaddr_ll.sll_pkttype
	sllAfterHdr3 = 48 // sockaddr_ll follows the aligned tpacket3_hdr
)

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// packetFD owns one AF_PACKET socket and its ring mapping; mem is the
// hot path's copy of the mapping's bytes.
type packetFD struct {
	own  sys.FD
	ring *sys.Mapping
	mem  []byte
}

// fd is the socket's descriptor (-1 once closed).
func (p *packetFD) fd() int { return p.own.Int() }

func (p *packetFD) close() error {
	err := p.ring.Close()
	p.ring, p.mem = nil, nil
	if cerr := p.own.Close(); err == nil {
		err = cerr
	}
	return err
}

func openPacket(what string) (*packetFD, error) {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: socket(AF_PACKET, SOCK_RAW): %w", what, os.NewSyscallError("socket", err))
	}
	return &packetFD{own: sys.OwnFD(fd)}, nil
}

func (p *packetFD) setInt(opt, v int, name string) error {
	if err := unix.SetsockoptInt(p.fd(), unix.SOL_PACKET, opt, v); err != nil {
		return fmt.Errorf("setsockopt(%s=%d): %w", name, v, os.NewSyscallError("setsockopt", err))
	}
	return nil
}

// awaitInput polls fds (this socket, POLLIN|POLLERR) for up to timeout
// (rounded up to a millisecond) and returns the socket's pending error,
// such as the device going down or away (ENETDOWN, ENXIO).
func (p *packetFD) awaitInput(fds []unix.PollFd, timeout time.Duration, what string) error {
	ms := int(timeout.Milliseconds())
	if timeout > 0 && ms == 0 {
		ms = 1
	}
	if _, err := unix.Poll(fds, ms); err != nil && err != unix.EINTR {
		return fmt.Errorf("poll %s: %w", what, os.NewSyscallError("poll", err))
	}
	if fds[0].Revents&unix.POLLERR != 0 {
		serr, err := unix.GetsockoptInt(p.fd(), unix.SOL_SOCKET, unix.SO_ERROR)
		if err == nil && serr != 0 {
			return fmt.Errorf("%s: %w", what, os.NewSyscallError("recv", unix.Errno(serr)))
		}
	}
	return nil
}

func (p *packetFD) bind(ifindex int, proto uint16) error {
	sa := &unix.SockaddrLinklayer{Protocol: htons(proto), Ifindex: ifindex}
	if err := unix.Bind(p.fd(), sa); err != nil {
		return fmt.Errorf("bind to ifindex %d: %w", ifindex, os.NewSyscallError("bind", err))
	}
	return nil
}

// mapRing maps size bytes of the socket's rings and, when lock is set,
// mlocks them (charged to RLIMIT_MEMLOCK unless CAP_IPC_LOCK).
func (p *packetFD) mapRing(size int, lock bool) error {
	m, err := sys.MapFile(p.fd(), size, true, true, "ring")
	if err != nil {
		return err
	}
	p.ring, p.mem = m, m.Bytes()
	if lock {
		return m.Lock()
	}
	return nil
}

// TxConfig describes a TPACKET_V3 TX ring.
type TxConfig struct {
	Ifindex     int
	Slot        int  // bytes per slot: a power of two >= TPacket3HdrLen + frame
	BlockSize   int  // multiple of the page size and of Slot
	Blocks      int  // number of blocks
	QdiscBypass bool // PACKET_QDISC_BYPASS
	Lock        bool // mlock the ring (RLIMIT_MEMLOCK applies)
	// Linear puts a virtio_net_hdr (PACKET_VNET_HDR) in front of each
	// frame whose hdr_len covers the whole frame, so the kernel copies
	// the frame into the skb's head instead of attaching the ring page
	// as a fragment. On virtual devices (veth, lo), whose receive path
	// would copy a fragment into a freshly allocated page anyway
	// (skb_copy_ubufs), this is cheaper; on a NIC it costs a copy. The
	// kernel then no longer caps the frame at the MTU: the caller must.
	Linear bool
	// FragMin, with Linear, sends frames of at least FragMin bytes as
	// fragments after all (hdr_len 0: only the link header is copied);
	// 0 keeps every frame linear. On lo small frames are cheaper linear
	// and larger ones as fragments.
	FragMin int
}

// VnetHdrLen is the size of struct virtio_net_hdr.
const VnetHdrLen = 10

// TxRing is an AF_PACKET socket with a TPACKET_V3 TX ring (protocol
// 0: it receives nothing). Frames are written into slots in ring order:
// Reserve hands out the next free slots, Commit marks them SEND_REQUEST and
// kicks the kernel with one send(). Not safe for concurrent use.
type TxRing struct {
	p        packetFD
	depth    int
	slot     int
	maxFrame int
	status   []*uint32           // per slot: tp_status
	length   []*uint32           // per slot: tp_len
	data     [][]byte            // per slot: frame data, len maxFrame
	vnet     []*[VnetHdrLen]byte // per slot, with Linear: the virtio_net_hdr
	dataOff  int                 // TPacket3HdrLen, + VnetHdrLen with Linear
	head     int                 // next slot to reserve
	reserved int                 // slots handed out by the last Reserve
	pending  int                 // slots marked SEND_REQUEST since the last complete kick
	kicks    uint64
	eagain   uint64
	warm     bool // linear and larger than warmRingMin: Commit warms frames of warmMin bytes or more
	fragMin  int  // with vnet: frames of at least fragMin bytes go as fragments (0: none)
	sink     byte // what warm loaded
}

// NewTxRing opens the socket and sets up and maps the ring. On error
// nothing is left open.
func NewTxRing(c TxConfig) (*TxRing, error) {
	page := os.Getpagesize()
	if c.Slot < TPacket3HdrLen+14 || c.Slot%unix.TPACKET_ALIGNMENT != 0 || c.BlockSize%page != 0 || c.BlockSize%c.Slot != 0 || c.Blocks < 1 {
		return nil, fmt.Errorf("TX ring geometry slot %d, block %d × %d: invalid", c.Slot, c.BlockSize, c.Blocks)
	}
	p, err := openPacket("TX ring")
	if err != nil {
		return nil, err
	}
	r := &TxRing{p: *p}
	if err := r.setup(c); err != nil {
		r.p.close()
		return nil, err
	}
	return r, nil
}

func (r *TxRing) setup(c TxConfig) error {
	if err := r.p.setInt(unix.PACKET_VERSION, unix.TPACKET_V3, "PACKET_VERSION"); err != nil {
		return fmt.Errorf("TPACKET_V3: %w: %w", sys.ErrNotSupported, err)
	}
	if err := r.p.setInt(unix.PACKET_LOSS, 1, "PACKET_LOSS"); err != nil {
		return err
	}
	if c.QdiscBypass {
		if err := r.p.setInt(unix.PACKET_QDISC_BYPASS, 1, "PACKET_QDISC_BYPASS"); err != nil {
			return err
		}
	}
	r.dataOff = TPacket3HdrLen
	if c.Linear {
		// Without PACKET_VNET_HDR the ring still works, with fragments.
		if err := r.p.setInt(unix.PACKET_VNET_HDR, 1, "PACKET_VNET_HDR"); err == nil {
			r.dataOff += VnetHdrLen
		} else {
			c.Linear = false
		}
	}
	per := c.BlockSize / c.Slot
	req := unix.TpacketReq3{
		Block_size: uint32(c.BlockSize),
		Block_nr:   uint32(c.Blocks),
		Frame_size: uint32(c.Slot),
		Frame_nr:   uint32(per * c.Blocks),
	}
	if err := unix.SetsockoptTpacketReq3(r.p.fd(), unix.SOL_PACKET, unix.PACKET_TX_RING, &req); err != nil {
		err = os.NewSyscallError("setsockopt", err)
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOPROTOOPT) {
			return fmt.Errorf("setsockopt(PACKET_TX_RING, TPACKET_V3): %w (kernel older than 4.11?): %w", sys.ErrNotSupported, err)
		}
		return fmt.Errorf("setsockopt(PACKET_TX_RING, %d blocks of %d bytes): %w", c.Blocks, c.BlockSize, err)
	}
	if err := r.p.bind(c.Ifindex, 0); err != nil {
		return err
	}
	if err := r.p.mapRing(c.BlockSize*c.Blocks, c.Lock); err != nil {
		return err
	}
	r.depth = per * c.Blocks
	r.slot = c.Slot
	r.warm = c.Linear && r.depth*r.slot > warmRingMin
	if c.Linear {
		r.fragMin = c.FragMin
	}
	r.maxFrame = c.Slot - r.dataOff
	r.status = make([]*uint32, r.depth)
	if c.Linear {
		r.vnet = make([]*[VnetHdrLen]byte, r.depth)
	}
	r.length = make([]*uint32, r.depth)
	r.data = make([][]byte, r.depth)
	for i := range r.depth {
		off := (i/per)*c.BlockSize + (i%per)*c.Slot
		h := r.p.mem[off : off+c.Slot]
		r.status[i] = (*uint32)(unsafe.Pointer(&h[tp3Status]))
		r.length[i] = (*uint32)(unsafe.Pointer(&h[tp3Len]))
		r.data[i] = h[r.dataOff:c.Slot:c.Slot]
		if c.Linear {
			r.vnet[i] = (*[VnetHdrLen]byte)(h[TPacket3HdrLen:])
		}
	}
	return nil
}

// Depth is the number of slots.
func (r *TxRing) Depth() int { return r.depth }

// MaxFrame is the largest frame a slot holds.
func (r *TxRing) MaxFrame() int { return r.maxFrame }

// Linear reports whether frames go out as linear skbs (PACKET_VNET_HDR),
// those of FragMin bytes or more excepted.
func (r *TxRing) Linear() bool { return r.vnet != nil }

// FragMin is the size from which frames go as fragments despite Linear
// (0: none).
func (r *TxRing) FragMin() int { return r.fragMin }

// Bytes is the size of the mapping.
func (r *TxRing) Bytes() int { return len(r.p.mem) }

// Kicks returns how many send() calls kicked the ring, and how many of
// them found the socket's send buffer full (EAGAIN/ENOBUFS).
func (r *TxRing) Kicks() (kicks, full uint64) { return r.kicks, r.eagain }

const txBusy = unix.TP_STATUS_SEND_REQUEST | unix.TP_STATUS_SENDING

// Reserve fills bufs with the next free slots in ring order (each of
// length MaxFrame) and returns how many.
func (r *TxRing) Reserve(bufs [][]byte) int {
	n := 0
	i := r.head
	for n < len(bufs) && n < r.depth {
		if atomic.LoadUint32(r.status[i])&txBusy != 0 {
			break
		}
		bufs[n] = r.data[i]
		n++
		if i++; i == r.depth {
			i = 0
		}
	}
	r.reserved = n
	return n
}

// Commit marks the first len(lens) reserved slots SEND_REQUEST with the
// given frame lengths (which must not exceed MaxFrame) and kicks the kernel
// with send(MSG_DONTWAIT). Frames the kernel could not take yet (send
// buffer full) stay requested and go with the next kick. The slots of the
// last Reserve beyond len(lens) go back unused.
func (r *TxRing) Commit(lens []int) error {
	i := r.head
	for _, l := range lens {
		if r.vnet != nil {
			// flags 0, gso_type NONE, hdr_len = the whole frame
			// (little-endian), gso_size/csum_start/csum_offset 0;
			// hdr_len 0 for a frame sent as fragments.
			if r.fragMin > 0 && l >= r.fragMin {
				*r.vnet[i] = [VnetHdrLen]byte{}
			} else {
				*r.vnet[i] = [VnetHdrLen]byte{2: byte(l), 3: byte(l >> 8)}
				if r.warm && l >= warmMin {
					r.sink ^= warm(r.data[i][:l])
				}
			}
			l += VnetHdrLen
		}
		*r.length[i] = uint32(l)
		// A plain store: the kernel reads the ring only inside the
		// send() of Kick (tpacket_snd runs in the caller's context;
		// nothing walks the ring in the background), and the system
		// call orders every store before it. An atomic store is a
		// locked XCHG on amd64, ~5 ns a frame.
		*r.status[i] = unix.TP_STATUS_SEND_REQUEST
		if i++; i == r.depth {
			i = 0
		}
	}
	r.head = i
	r.reserved = 0
	r.pending += len(lens)
	return r.Kick(false)
}

// Kick asks the kernel to send every requested slot. Without wait it
// returns at once (MSG_DONTWAIT); with wait it blocks until the kernel has
// sent every requested frame and released its buffers.
func (r *TxRing) Kick(wait bool) error {
	flags := unix.MSG_DONTWAIT
	if wait {
		flags = 0
	}
	r.kicks++
	var e unix.Errno
	if wait {
		_, _, e = unix.Syscall6(unix.SYS_SENDTO, uintptr(r.p.fd()), 0, 0, uintptr(flags), 0, 0)
	} else {
		// MSG_DONTWAIT never sleeps, so the kick is a raw system call:
		// the Go runtime does not hand this thread's P to another
		// thread while the kernel walks the ring (which, for a batch
		// of hundreds of frames on veth or lo, takes long enough for
		// sysmon to do so, costing futex wake-ups and context switches
		// on the worker's CPU).
		_, _, e = unix.RawSyscall6(unix.SYS_SENDTO, uintptr(r.p.fd()), 0, 0, uintptr(flags), 0, 0)
	}
	switch e {
	case 0:
		r.pending = 0
		return nil
	case unix.EAGAIN, unix.ENOBUFS:
		r.eagain++
		return nil
	case unix.EINTR:
		return nil
	}
	return fmt.Errorf("send on TX ring: %w", os.NewSyscallError("sendto", e))
}

// Busy counts the slots still requested or in flight.
func (r *TxRing) Busy() int {
	n := 0
	for _, s := range r.status {
		if atomic.LoadUint32(s)&txBusy != 0 {
			n++
		}
	}
	return n
}

// WaitWritable blocks until the slot at the head is free or timeout passes.
func (r *TxRing) WaitWritable(timeout time.Duration) error {
	fds := []unix.PollFd{{Fd: int32(r.p.fd()), Events: unix.POLLOUT}}
	_, err := unix.Poll(fds, int(timeout.Milliseconds()))
	if err != nil && err != unix.EINTR {
		return fmt.Errorf("poll TX ring: %w", os.NewSyscallError("poll", err))
	}
	return nil
}

// Drain kicks the ring until no slot is requested or in flight, or timeout
// passes; it returns the number of slots still busy then.
func (r *TxRing) Drain(timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	for {
		if err := r.Kick(false); err != nil {
			return r.Busy(), err
		}
		busy := r.Busy()
		if busy == 0 || time.Now().After(deadline) {
			return busy, nil
		}
		_ = r.WaitWritable(time.Millisecond)
		time.Sleep(50 * time.Microsecond)
	}
}

// Close unmaps the ring and closes the socket; it is idempotent.
func (r *TxRing) Close() error { return r.p.close() }

// mmsghdr is struct mmsghdr on 64-bit Linux (x/sys has none).
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
	_   [4]byte
}

// Mmsg is an AF_PACKET socket (protocol 0, bound to an interface)
// sending batches with sendmmsg from its own staging buffers.
type Mmsg struct {
	p    packetFD
	slab []byte
	bufs [][]byte
	iov  []unix.Iovec
	msgs []mmsghdr
}

// NewMmsg opens a packet socket on ifindex with batch staging buffers
// of maxFrame bytes. On error nothing is left open.
func NewMmsg(ifindex, batch, maxFrame int, qdiscBypass bool) (*Mmsg, error) {
	if batch < 1 || maxFrame < 1 {
		return nil, fmt.Errorf("sendmmsg socket: batch %d or frame size %d invalid", batch, maxFrame)
	}
	p, err := openPacket("sendmmsg socket")
	if err != nil {
		return nil, err
	}
	m := &Mmsg{p: *p}
	if qdiscBypass {
		if err := m.p.setInt(unix.PACKET_QDISC_BYPASS, 1, "PACKET_QDISC_BYPASS"); err != nil {
			m.p.close()
			return nil, err
		}
	}
	if err := m.p.bind(ifindex, 0); err != nil {
		m.p.close()
		return nil, err
	}
	m.slab = make([]byte, batch*maxFrame)
	m.bufs = make([][]byte, batch)
	m.iov = make([]unix.Iovec, batch)
	m.msgs = make([]mmsghdr, batch)
	for i := range batch {
		m.bufs[i] = m.slab[i*maxFrame : (i+1)*maxFrame : (i+1)*maxFrame]
		m.iov[i].Base = &m.bufs[i][0]
		m.msgs[i].hdr.Iov = &m.iov[i]
		m.msgs[i].hdr.Iovlen = 1
	}
	return m, nil
}

// Buffers returns the staging buffers.
func (m *Mmsg) Buffers() [][]byte { return m.bufs }

// Send transmits the first len(lens) staging buffers with sendmmsg (the
// kernel takes at most 1024 per call, UIO_MAXIOV, so larger batches take
// several), blocking while the socket's send buffer is full, and returns
// how many frames the kernel accepted.
func (m *Mmsg) Send(lens []int) (int, error) {
	for i, l := range lens {
		m.iov[i].Len = uint64(l)
	}
	sent := 0
	for sent < len(lens) {
		n, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(m.p.fd()), uintptr(unsafe.Pointer(&m.msgs[sent])), uintptr(len(lens)-sent), 0, 0, 0)
		if e != 0 {
			if e == unix.EINTR || e == unix.ENOBUFS || e == unix.EAGAIN {
				continue
			}
			return sent, fmt.Errorf("sendmmsg: %w", os.NewSyscallError("sendmmsg", e))
		}
		sent += int(n)
	}
	return sent, nil
}

// Close closes the socket; it is idempotent.
func (m *Mmsg) Close() error { return m.p.close() }

// RxConfig describes a TPACKET_V3 RX ring.
type RxConfig struct {
	Ifindex   int
	BlockSize int // multiple of the page size
	Blocks    int
	FrameSize int // largest frame to capture (snap length)
	// RetireTimeout is how long the kernel waits before handing over a
	// block that is not full (tp_retire_blk_tov, ms resolution, >= 1 ms).
	RetireTimeout time.Duration
	Lock          bool
}

// RxRing is an AF_PACKET socket bound to one interface for every
// protocol (ETH_P_ALL) with a TPACKET_V3 RX ring. Frames it sent itself
// (or that this host sends on the interface) are not delivered:
// PACKET_IGNORE_OUTGOING where the kernel has it, else the outgoing
// packet type is filtered. Not safe for concurrent use.
type RxRing struct {
	p         packetFD
	blockSize int
	blocks    int
	cur       int // block being read
	relFrom   int // first block to give back at the next call
	done      int // blocks read completely, to give back at the next call
	held      bool
	left      int // packets left in the held block
	off       int // offset of the next packet in the held block
	filterOut bool
	outgoing  uint64
	pollFds   []unix.PollFd
}

// NewRxRing opens the socket, sets up and maps the ring and binds it.
// On error nothing is left open.
func NewRxRing(c RxConfig) (*RxRing, error) {
	page := os.Getpagesize()
	if c.BlockSize < page || c.BlockSize%page != 0 || c.Blocks < 1 || c.FrameSize < 64 || c.FrameSize+128 > c.BlockSize {
		return nil, fmt.Errorf("RX ring geometry block %d × %d, frame %d: invalid", c.BlockSize, c.Blocks, c.FrameSize)
	}
	p, err := openPacket("RX ring")
	if err != nil {
		return nil, err
	}
	r := &RxRing{p: *p, blockSize: c.BlockSize, blocks: c.Blocks}
	if err := r.setup(c); err != nil {
		r.p.close()
		return nil, err
	}
	r.pollFds = []unix.PollFd{{Fd: int32(r.p.fd()), Events: unix.POLLIN | unix.POLLERR}}
	return r, nil
}

func (r *RxRing) setup(c RxConfig) error {
	if err := r.p.setInt(unix.PACKET_VERSION, unix.TPACKET_V3, "PACKET_VERSION"); err != nil {
		return fmt.Errorf("TPACKET_V3: %w: %w", sys.ErrNotSupported, err)
	}
	if err := r.p.setInt(unix.PACKET_IGNORE_OUTGOING, 1, "PACKET_IGNORE_OUTGOING"); err != nil {
		r.filterOut = true
	}
	tov := max(int(c.RetireTimeout/time.Millisecond), 1)
	frame := (TPacket3HdrLen + 20 + c.FrameSize + 15) &^ 15
	req := unix.TpacketReq3{
		Block_size:       uint32(c.BlockSize),
		Block_nr:         uint32(c.Blocks),
		Frame_size:       uint32(frame),
		Frame_nr:         uint32(c.BlockSize / frame * c.Blocks),
		Retire_blk_tov:   uint32(tov),
		Sizeof_priv:      0,
		Feature_req_word: 0,
	}
	if err := unix.SetsockoptTpacketReq3(r.p.fd(), unix.SOL_PACKET, unix.PACKET_RX_RING, &req); err != nil {
		return fmt.Errorf("setsockopt(PACKET_RX_RING, %d blocks of %d bytes): %w", c.Blocks, c.BlockSize, os.NewSyscallError("setsockopt", err))
	}
	if err := r.p.mapRing(c.BlockSize*c.Blocks, c.Lock); err != nil {
		return err
	}
	return r.p.bind(c.Ifindex, unix.ETH_P_ALL)
}

func (r *RxRing) block(i int) []byte {
	return r.p.mem[i*r.blockSize : (i+1)*r.blockSize]
}

// Next fills views with received frames (valid until the next call) and
// returns how many; it waits up to timeout for the first one. Blocks whose
// frames were handed out are given back to the kernel at the next call.
//
// When ts is not nil (len(ts) >= len(views)) it receives each frame's
// kernel receive timestamp in CLOCK_REALTIME nanoseconds.
func (r *RxRing) Next(views [][]byte, ts []int64, timeout time.Duration) (int, error) {
	for ; r.done > 0; r.done-- {
		b := r.block(r.relFrom)
		atomic.StoreUint32((*uint32)(unsafe.Pointer(&b[bdStatus])), unix.TP_STATUS_KERNEL)
		if r.relFrom++; r.relFrom == r.blocks {
			r.relFrom = 0
		}
	}
	n := 0
	waited := false
	for n < len(views) {
		if !r.held {
			if r.done+1 == r.blocks {
				break // every other block is still lent out to the caller
			}
			b := r.block(r.cur)
			st := (*uint32)(unsafe.Pointer(&b[bdStatus]))
			if atomic.LoadUint32(st)&unix.TP_STATUS_USER == 0 {
				if n > 0 || waited {
					break
				}
				waited = true
				if err := r.p.awaitInput(r.pollFds, timeout, "RX ring"); err != nil {
					return 0, err
				}
				continue
			}
			r.held = true
			r.left = int(*(*uint32)(unsafe.Pointer(&b[bdNumPkts])))
			r.off = int(*(*uint32)(unsafe.Pointer(&b[bdFirstPkt])))
		}
		b := r.block(r.cur)
		for r.left > 0 && n < len(views) {
			h := b[r.off:]
			next := *(*uint32)(unsafe.Pointer(&h[tp3NextOffset]))
			snap := *(*uint32)(unsafe.Pointer(&h[tp3Snaplen]))
			mac := *(*uint16)(unsafe.Pointer(&h[tp3Mac]))
			if r.filterOut && h[sllAfterHdr3+sllPkttype] == unix.PACKET_OUTGOING {
				r.outgoing++
			} else {
				start, end := int(mac), int(mac)+int(snap)
				if st := *(*uint32)(unsafe.Pointer(&h[tp3Status])); st&unix.TP_STATUS_VLAN_VALID != 0 && snap >= 2*header.EthernetAddrLen && start-header.VLANLen >= sllAfterHdr3+sllLen {
					tci := uint16(*(*uint32)(unsafe.Pointer(&h[tp3VlanTCI])))
					start = header.InsertVLAN(h, start, vlanTPID(st, *(*uint16)(unsafe.Pointer(&h[tp3VlanTPID]))), tci)
				}
				views[n] = h[start:end:end]
				if ts != nil {
					sec := *(*uint32)(unsafe.Pointer(&h[tp3Sec]))
					nsec := *(*uint32)(unsafe.Pointer(&h[tp3Nsec]))
					ts[n] = int64(sec)*1e9 + int64(nsec)
				}
				n++
			}
			r.left--
			r.off += int(next)
		}
		if r.left == 0 {
			// Done with this block; release it at the next call, when
			// the caller no longer uses the views into it.
			r.held = false
			r.done++
			if r.cur++; r.cur == r.blocks {
				r.cur = 0
			}
		}
	}
	return n, nil
}

// Stats returns and resets the kernel's counters: packets seen and
// dropped for lack of ring space (PACKET_STATISTICS), plus the outgoing
// packets this process filtered itself.
func (r *RxRing) Stats() (packets, drops, outgoing uint64, err error) {
	st, err := unix.GetsockoptTpacketStatsV3(r.p.fd(), unix.SOL_PACKET, unix.PACKET_STATISTICS)
	if err != nil {
		return 0, 0, r.outgoing, fmt.Errorf("getsockopt(PACKET_STATISTICS): %w", err)
	}
	return uint64(st.Packets), uint64(st.Drops), r.outgoing, nil
}

// Close unmaps the ring and closes the socket; it is idempotent.
func (r *RxRing) Close() error { return r.p.close() }

// Feature names an AF_PACKET capability Probe can test.
type Feature int

// AF_PACKET features.
const (
	FeatureTxRingV3 Feature = iota
	FeatureQdiscBypass
	FeatureIgnoreOutgoing
	FeatureVnetHdr
)

// Probe tests one AF_PACKET feature on a throw-away socket (bound
// to nothing, sending nothing). The error is nil when the feature works;
// it is a permission error when the socket cannot be opened.
func Probe(f Feature) error {
	p, err := openPacket("probe")
	if err != nil {
		return err
	}
	defer p.close()
	switch f {
	case FeatureTxRingV3:
		if err := p.setInt(unix.PACKET_VERSION, unix.TPACKET_V3, "PACKET_VERSION"); err != nil {
			return err
		}
		req := unix.TpacketReq3{Block_size: uint32(os.Getpagesize()), Block_nr: 1, Frame_size: 128, Frame_nr: uint32(os.Getpagesize() / 128)}
		if err := unix.SetsockoptTpacketReq3(p.fd(), unix.SOL_PACKET, unix.PACKET_TX_RING, &req); err != nil {
			return fmt.Errorf("setsockopt(PACKET_TX_RING, TPACKET_V3): %w", os.NewSyscallError("setsockopt", err))
		}
		return nil
	case FeatureQdiscBypass:
		return p.setInt(unix.PACKET_QDISC_BYPASS, 1, "PACKET_QDISC_BYPASS")
	case FeatureIgnoreOutgoing:
		return p.setInt(unix.PACKET_IGNORE_OUTGOING, 1, "PACKET_IGNORE_OUTGOING")
	case FeatureVnetHdr:
		return p.setInt(unix.PACKET_VNET_HDR, 1, "PACKET_VNET_HDR")
	}
	return fmt.Errorf("probe: unknown AF_PACKET feature %d", f)
}
