//go:build linux

package tpacket

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/wpg-dev/wpg/header"
	"github.com/wpg-dev/wpg/internal/sys"
)

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
