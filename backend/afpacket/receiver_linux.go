//go:build linux

package afpacket

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/backend/afpacket/internal/tpacket"
	"github.com/wpg-dev/wpg/header"
	"github.com/wpg-dev/wpg/internal/sys"
)

// Receiver geometry: blocks of rxBlock bytes, as many as o.Net.RingBytes
// (default DefaultRingBytes) holds; a block is handed over when full or
// after rxRetire, so at low rates the ring holds blocks × rxRetire of
// traffic (1 s with the defaults) while the receiver is descheduled.
const (
	rxBlock  = 64 << 10
	rxRetire = 4 * time.Millisecond
)

// rxSocket is how a Receiver takes frames from the kernel: a TPACKET_V3
// RX ring, or recvmmsg into its own buffers.
type rxSocket interface {
	Next(views [][]byte, ts []int64, timeout time.Duration) (int, error)
	Stats() (packets, drops, outgoing uint64, err error)
	Close() error
}

// rxMmsgBatch is how many frames one recvmmsg takes at most, and
// rxMmsgBuf the receive buffer it asks for (frames wait there instead of
// in a ring).
const (
	rxMmsgBatch = 256
	rxMmsgBuf   = 32 << 20
)

// Receiver captures the frames arriving on one interface (every protocol)
// through a TPACKET_V3 RX ring, or with recvmmsg (NoRxRing, or when the
// ring cannot be set up); frames this host sends on the interface are not
// delivered.
type Receiver struct {
	ring   rxSocket
	ts     []int64 // kernel receive times of the last Next, CLOCK_MONOTONIC ns
	info   backend.Info
	closed bool
	// Totals of the kernel counters (reading them resets them).
	packets, drops, outgoing uint64
}

// NewReceiver opens a receiver on o.Net.Interface. On error nothing is left
// open.
func NewReceiver(_ context.Context, o backend.Options) (*Receiver, error) {
	ifc, err := lookupInterface(o.Net.Interface)
	if err != nil {
		return nil, err
	}
	return newReceiverOn(ifc, o)
}

// newReceiverOn opens a receiver on the validated interface ifc.
func newReceiverOn(ifc iface, o backend.Options) (*Receiver, error) {
	ringBytes := o.Net.RingBytes
	if ringBytes <= 0 {
		ringBytes = DefaultRingBytes
	}
	blocks := int(ringBytes / rxBlock)
	if blocks < 2 {
		return nil, backend.ErrorfAt("afpacket", "receiver", "--ring-bytes %d: need at least %d bytes (two %d-byte blocks)", ringBytes, 2*rxBlock, rxBlock)
	}
	snap := min(ifc.mtu+header.EthernetLen+header.VLANLen, rxBlock-256)
	r := &Receiver{info: backend.Info{
		Backend: "afpacket", Interface: ifc.name, NUMANode: ifc.numa,
		Details: map[string]string{"snap_bytes": strconv.Itoa(snap), "mtu": strconv.Itoa(ifc.mtu)},
	}}
	if !o.Net.NoRxRing {
		ring, err := tpacket.NewRxRing(tpacket.RxConfig{
			Ifindex: ifc.index, BlockSize: rxBlock, Blocks: blocks, FrameSize: snap,
			RetireTimeout: rxRetire, Lock: true,
		})
		switch {
		case err == nil:
			r.ring, r.info.Mode = ring, ModeRxRing
			r.info.Details["block_bytes"] = strconv.Itoa(rxBlock)
			r.info.Details["blocks"] = strconv.Itoa(blocks)
			return r, nil
		case errors.Is(err, sys.ErrNotSupported) || sys.IsNoMemory(err):
			r.info.Reason = "RX ring unavailable, fell back to recvmmsg: " + err.Error()
		default:
			return nil, openError(ifc.name, err, "; or receive without a ring: --no-rx-ring")
		}
	} else {
		r.info.Reason = "--no-rx-ring"
	}
	mm, err := tpacket.NewMmsgRx(ifc.index, rxMmsgBatch, snap, rxMmsgBuf)
	if err != nil {
		return nil, openError(ifc.name, err, "")
	}
	r.ring, r.info.Mode = mm, ModeRecvmmsg
	return r, nil
}

// Next fills views with received frames, valid until the next call.
func (r *Receiver) Next(views [][]byte, timeout time.Duration) (int, error) {
	if cap(r.ts) < len(views) {
		r.ts = make([]int64, len(views))
	}
	r.ts = r.ts[:len(views)]
	n, err := r.ring.Next(views, r.ts, timeout)
	if n > 0 {
		off := sys.RealtimeOffsetNs()
		for i := range n {
			r.ts[i] -= off
		}
	}
	r.ts = r.ts[:n]
	if err != nil {
		err = backend.ErrorfAt("afpacket", "on "+r.info.Interface, "%w", err)
	}
	return n, err
}

// RxTimestamps returns the kernel's receive time (CLOCK_MONOTONIC ns) of
// each frame of the last Next: the moment the frame reached the socket,
// before the ring handed its block over.
func (r *Receiver) RxTimestamps() []int64 { return r.ts }

// Info describes the receiver, with the kernel's drop counter (frames the
// ring had no room for) when it can be read.
func (r *Receiver) Info() backend.Info {
	i := r.info.WithDetails(3)
	if !r.closed {
		if pk, drops, out, err := r.ring.Stats(); err == nil {
			r.packets += pk
			r.drops += drops
			r.outgoing = out
		}
	}
	i.Details["kernel_packets"] = strconv.FormatUint(r.packets, 10)
	i.Details["kernel_drops"] = strconv.FormatUint(r.drops, 10)
	if r.outgoing > 0 {
		i.Details["outgoing_filtered"] = strconv.FormatUint(r.outgoing, 10)
	}
	if r.packets == 0 && r.outgoing == 0 {
		// wpg send -i X and wpg recv -i X on the same interface: the
		// receiver saw nothing and the report said no more than 0 frames.
		i.Hint = nothingArrived(i.Interface)
	}
	return i
}

// nothingArrived explains a receiver that has seen no frame at all.
func nothingArrived(ifc string) string {
	return fmt.Sprintf("nothing arrived on %s: the receiver counts the frames that arrive there, never those this host sends on it; send on the other end (of a veth pair, its peer; of a cable or a device under test, the far side), or check that the sender's frames reach %s", ifc, ifc)
}

// Close closes the socket and unmaps the ring; it is idempotent.
func (r *Receiver) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	return r.ring.Close()
}
