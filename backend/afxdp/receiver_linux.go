//go:build linux

package afxdp

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/backend/afxdp/internal/xsk"
	"github.com/wpg-dev/wpg/internal/inputerr"
	"github.com/wpg-dev/wpg/internal/sys"
)

// rxQueue is one receive queue's socket and the UMEM chunks it holds:
// spare are chunks neither on the fill ring nor handed out in views.
type rxQueue struct {
	sock  *xsk.Socket
	queue int
	mem   []byte
	mask  uint64 // clears the offset within a chunk
	spare []uint64
	lent  []uint64 // chunks in the views of the last Next
	addrs []uint64
	lens  []int
}

// Receiver takes the frames carrying wpg's signature off every receive
// queue of an interface from --queue on: an XDP program redirects them to
// an XSKMAP with one AF_XDP socket per queue and passes the rest to the
// stack.
type Receiver struct {
	steer   *xsk.Steering
	queues  []*rxQueue
	poll    *xsk.Poller
	next    int     // queue to read first (round robin)
	ts      []int64 // receive times of the last Next's frames (RxTimestamps)
	stamped uint64  // frames that carried the program's receive time
	busy    bool
	info    backend.Info
	closed  bool
	stats   sockStats // totals at Close
}

// newReceiver opens the receiver on ifc. On error nothing is left open or
// attached.
func newReceiver(_ context.Context, ifc iface, o backend.Options) (_ *Receiver, err error) {
	if err := CheckXDPMode(o.Net.XDPMode); err != nil {
		return nil, backend.Errorf("afxdp", "%w", err)
	}
	first := o.Net.Queue
	if first >= ifc.rxQueues {
		return nil, backend.ErrorfAt("afxdp", "receiver", "%w", checkQueues(ifc, first, 1, ifc.rxQueues, "RX"))
	}
	n := ifc.rxQueues - first
	ringBytes := o.Net.RingBytes
	if ringBytes <= 0 {
		ringBytes = DefaultRingBytes
	}
	page := os.Getpagesize()
	if ifc.mtu > maxRxMTU(page) {
		// RxGeometry's words, with this interface's name in the command.
		return nil, backend.ErrorfAt("afxdp", "receiver on "+ifc.name, "an MTU of %d does not fit a UMEM chunk (at most %d bytes with the kernel's %d-byte headroom): lower it with `ip link set %s mtu %d`, or receive with --backend afpacket", ifc.mtu, page, rxHeadroom, ifc.name, maxRxMTU(page))
	}
	chunk, chunks, err := RxGeometry(ifc.mtu, ringBytes, page)
	if err != nil {
		return nil, backend.ErrorfAt("afxdp", fmt.Sprintf("receiver on %s (%d queues)", ifc.name, n), "%w", err)
	}
	batch := max(o.Batch, 64)
	r := &Receiver{busy: o.Net.BusyPoll}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	mode := xsk.AttachAuto
	switch o.Net.XDPMode {
	case XDPNative:
		mode = xsk.AttachDriver
	case XDPGeneric:
		mode = xsk.AttachGeneric
	}
	// Every chunk fits on the fill ring, and on the RX ring once filled:
	// the kernel has all of them to receive into but the few in the last
	// Next's views, which go back at the next call.
	ring := chunks
	var socks []*xsk.Socket
	zc := true
	for q := first; q < ifc.rxQueues; q++ {
		s, err := xsk.Open(xsk.Config{
			Ifindex: ifc.index, Queue: q, ChunkSize: chunk, Chunks: chunks,
			Fill: ring, Comp: 2, RX: ring,
			Mode: bindMode(o.Net.XDPMode), NeedWakeup: true, NUMANode: ifc.numa,
			BusyPoll: o.Net.BusyPoll, BusyPollBudget: batch, BindRetry: bindRetry,
		})
		if err != nil {
			return nil, openError(ifc, q, o.Net.XDPMode, int64(chunk)*int64(chunks), err)
		}
		rq := &rxQueue{sock: s, queue: q, mem: s.UMEM(), mask: ^uint64(chunk - 1),
			spare: make([]uint64, 0, chunks), lent: make([]uint64, 0, batch),
			addrs: make([]uint64, batch), lens: make([]int, batch)}
		for i := range chunks {
			rq.spare = append(rq.spare, uint64(i*chunk))
		}
		rq.refill()
		r.queues = append(r.queues, rq)
		socks = append(socks, s)
		zc = zc && s.ZeroCopy()
	}
	if r.steer, err = xsk.Steer(ifc.index, ifc.rxQueues, mode); err != nil {
		return nil, steerError(ifc, err)
	}
	for _, rq := range r.queues {
		if err := r.steer.Add(rq.queue, rq.sock.FD()); err != nil {
			return nil, backend.ErrorfAt("afxdp", "receiver on "+ifc.name, "%w", err)
		}
	}
	r.poll = xsk.NewPoller(socks)
	attach := "driver (native)"
	if !r.steer.Driver {
		attach = "generic (SKB)"
	}
	r.info = backend.Info{
		Backend: "afxdp", Interface: ifc.name, NUMANode: ifc.numa, RingDepth: ring, Mode: ModeCopy,
		Details: map[string]string{
			"queues":      queueRange(first, ifc.rxQueues-1),
			"xdp_attach":  attach + ", BPF link (detached when wpg exits)",
			"umem_bytes":  strconv.FormatInt(int64(chunk)*int64(chunks), 10) + " per queue",
			"chunk_bytes": strconv.Itoa(chunk),
			"umem_numa":   r.queues[0].sock.NUMA(),
			"steering":    "frames ending in wpg's signature go to the sockets; the rest pass to the stack",
			"mtu":         strconv.Itoa(ifc.mtu),
		},
	}
	if zc {
		r.info.Mode = ModeZeroCopy
	} else if o.Net.XDPMode != XDPGeneric {
		r.info.Reason = "zero-copy unavailable: " + ifc.driverName() + " of " + ifc.name + " has no AF_XDP zero-copy support (copy mode)"
	}
	if r.steer.Reason != "" {
		r.info.Reason = strings.TrimPrefix(r.info.Reason+"; ", "; ") + r.steer.Reason
	}
	if o.Net.BusyPoll {
		r.info.Details["busy_poll"] = r.queues[0].sock.BusyPoll()
	}
	return r, nil
}

func queueRange(a, b int) string {
	if a == b {
		return strconv.Itoa(a)
	}
	return fmt.Sprintf("%d-%d", a, b)
}

// steerError explains a refused XDP program or attachment.
func steerError(ifc iface, err error) error {
	switch {
	case sys.IsPermission(err):
		return inputerr.WithFix(backend.ErrorfAt("afxdp", "receiver on "+ifc.name, "loading and attaching the XDP program needs CAP_BPF and CAP_NET_ADMIN (or root): `sudo setcap cap_net_raw,cap_net_admin,cap_bpf,cap_ipc_lock+ep $(which wpg)`: %w", err), "grant CAP_BPF and CAP_NET_ADMIN")
	case xsk.IsBusy(err) || errors.Is(err, os.ErrExist):
		return backend.ErrorfAt("afxdp", "receiver on "+ifc.name, "another XDP program is attached (`ip link show %s` shows it; a program attached with `ip link set %s xdp …` must be removed with `ip link set %s xdp off` first): %w", ifc.name, ifc.name, ifc.name, err)
	case xsk.IsNotSupported(err):
		return inputerr.WithFix(&backend.UnsupportedError{Backend: "afxdp", What: "driver-mode XDP (--xdp-mode native) on " + ifc.name,
			Reason: ifc.driverName() + " refused it (" + err.Error() + ")", Fix: "use --xdp-mode auto or generic"}, "--xdp-mode auto or generic")
	}
	return backend.ErrorfAt("afxdp", "receiver on "+ifc.name, "%w", err)
}

// refill gives the kernel as many spare chunks as the fill ring takes.
func (q *rxQueue) refill() {
	n := min(len(q.spare), q.sock.FillFree())
	if n == 0 {
		return
	}
	q.sock.Fill(q.spare[len(q.spare)-n:])
	q.spare = q.spare[:len(q.spare)-n]
}

// Next fills views with received frames (valid until the next call),
// reading the queues in turn. The chunks of the previous call go back to
// the fill ring first, so it stays full.
func (r *Receiver) Next(views [][]byte, timeout time.Duration) (int, error) {
	if cap(r.ts) < len(views) {
		r.ts = make([]int64, len(views))
	}
	r.ts = r.ts[:0]
	for _, q := range r.queues {
		if len(q.lent) > 0 {
			q.spare = append(q.spare, q.lent...)
			q.lent = q.lent[:0]
		}
		q.refill()
		if q.sock.FillNeedsWakeup() {
			q.sock.WakeRx()
		}
	}
	n := r.take(views)
	if n == 0 && timeout > 0 {
		if r.busy {
			for _, q := range r.queues {
				q.sock.WakeRx()
			}
			n = r.take(views)
		}
		if n == 0 {
			if err := r.poll.WaitReadable(timeout); err != nil {
				return 0, backend.ErrorfAt("afxdp", "on "+r.info.Interface, "%w", err)
			}
			n = r.take(views)
		}
	}
	return n, nil
}

// take reads up to len(views) frames from the queues, starting at r.next.
func (r *Receiver) take(views [][]byte) int {
	n := 0
	for k := 0; k < len(r.queues) && n < len(views); k++ {
		q := r.queues[(r.next+k)%len(r.queues)]
		want := min(len(views)-n, len(q.addrs), cap(q.lent)-len(q.lent))
		m := q.sock.Receive(q.addrs[:want], q.lens[:want])
		for i := range m {
			a := q.addrs[i]
			views[n+i] = q.mem[a : a+uint64(q.lens[i]) : a+uint64(q.lens[i])]
			base := a & q.mask
			q.lent = append(q.lent, base)
			r.ts = append(r.ts, r.stamp(q.mem, base, a))
		}
		n += m
	}
	r.next++
	if r.next == len(r.queues) {
		r.next = 0
	}
	return n
}

// stamp returns the receive time the XDP program put in front of the frame
// at UMEM address a (chunk base), or 0 when it is not there (no room for
// metadata), and clears the magic so that a later frame in the chunk
// cannot take it for its own.
func (r *Receiver) stamp(mem []byte, base, a uint64) int64 {
	if a < base+xsk.MetaLen {
		return 0
	}
	m := mem[a-xsk.MetaLen : a]
	if binary.NativeEndian.Uint64(m) != xsk.MetaMagic {
		return 0
	}
	binary.NativeEndian.PutUint64(m, 0)
	r.stamped++
	return int64(binary.NativeEndian.Uint64(m[8:]))
}

// RxTimestamps returns the time (CLOCK_MONOTONIC ns) each frame of the last
// Next reached the XDP program, before it was steered to its socket; frames
// the program could not stamp get the time Next returned.
func (r *Receiver) RxTimestamps() []int64 {
	var now int64
	for i, t := range r.ts {
		if t == 0 {
			if now == 0 {
				now = sys.MonotonicNs()
			}
			r.ts[i] = now
		}
	}
	return r.ts
}

// Info describes the receiver, with the kernel's counters of its sockets
// (sockStats.details): the frames a full RX ring or an empty fill ring
// cost, told apart from frames that never arrived.
func (r *Receiver) Info() backend.Info {
	i := r.info.WithDetails(7)
	d := i.Details
	st := r.stats
	if !r.closed {
		st = r.readStats()
	}
	st.details(d, true)
	d["rx_timestamps"] = strconv.FormatUint(r.stamped, 10) + " frames stamped by the XDP program (latency from them)"
	return i
}

func (r *Receiver) readStats() sockStats {
	socks := make([]*xsk.Socket, len(r.queues))
	for i, q := range r.queues {
		socks[i] = q.sock
	}
	return readStats(socks...)
}

// Close detaches the XDP program and closes the sockets; it is idempotent.
func (r *Receiver) Close() error {
	if r.closed {
		return nil
	}
	if r.steer != nil {
		r.stats = r.readStats()
	}
	r.closed = true
	var errs []error
	if r.steer != nil {
		errs = append(errs, r.steer.Close())
	}
	for _, q := range r.queues {
		errs = append(errs, q.sock.Close())
	}
	return errors.Join(errs...)
}
