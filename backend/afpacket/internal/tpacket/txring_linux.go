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

	"github.com/wpg-dev/wpg/internal/sys"
)

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
