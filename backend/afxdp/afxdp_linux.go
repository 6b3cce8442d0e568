//go:build linux

package afxdp

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/backend/afxdp/internal/xsk"
	"github.com/wpg-dev/wpg/header"
	"github.com/wpg-dev/wpg/internal/inputerr"
	"github.com/wpg-dev/wpg/internal/sys"
)

// iface is a validated interface.
type iface struct {
	name     string
	index    int
	mtu      int
	numa     int
	driver   string
	txQueues int
	rxQueues int
}

// lookupInterface checks that name exists and is up, and reads its queues,
// driver and NUMA node (backend.LookupLink: from the kernel of this
// thread's network namespace, and /sys where it shows that namespace's
// device); the queue counts come from ethtool's channels where the
// driver has them. It needs no privileges.
func lookupInterface(name string) (iface, error) {
	l, err := backend.LookupLink("afxdp", name)
	if err != nil {
		return iface{}, err
	}
	r := iface{name: l.Name, index: l.Index, mtu: l.MTU, numa: l.NUMANode, driver: l.Driver,
		txQueues: max(l.TXQueues, 1), rxQueues: max(l.RXQueues, 1)}
	if tx, rx, err := xsk.Channels(name); err == nil && tx > 0 && rx > 0 {
		r.txQueues, r.rxQueues = tx, rx
	}
	return r, nil
}

// driverName is the interface's driver for messages ("the veth driver").
func (ifc iface) driverName() string {
	if ifc.driver == "" {
		return "the driver"
	}
	return "the " + ifc.driver + " driver"
}

// checkQueues refuses queues first … first+n-1 when the interface has
// only count queues of that kind: a copy-mode socket bound beyond the TX
// queues would send nothing, silently.
func checkQueues(ifc iface, first, n, count int, kind string) error {
	last := first + n - 1
	if last < count {
		return nil
	}
	what := fmt.Sprintf("queue %d", last)
	if n > 1 {
		what = fmt.Sprintf("queues %d-%d (--queue %d, one per worker)", first, last, first)
	}
	within := "use --queue and --workers within them"
	if kind == "RX" {
		within = "use a --queue within them (the receiver binds every RX queue from --queue on)"
	}
	if ifc.driver == "veth" {
		// A veth has the queues it was made with; ethtool -L cannot go
		// past them (its maximum is that count, 1 by default).
		n := last + 1
		return fmt.Errorf("%s: %s has %d %s queue(s), 0-%d: %s, or make the veth pair again with more queues: `ip link add %s numtxqueues %d numrxqueues %d type veth peer name PEER numtxqueues %d numrxqueues %d` (ethtool cannot raise a veth's count)",
			what, ifc.name, count, kind, count-1, within, ifc.name, n, n, n, n)
	}
	return fmt.Errorf("%s: %s has %d %s queue(s), 0-%d: %s, or raise the count with `ethtool -L %s combined %d` (or tx/rx %d)",
		what, ifc.name, count, kind, count-1, within, ifc.name, last+1, last+1)
}

// openError turns a failed socket setup on queue into an error that names
// the fix.
func openError(ifc iface, queue int, mode string, umem int64, err error) error {
	stage := xsk.StageOf(err)
	switch {
	case xsk.IsNoFamily(err):
		return inputerr.WithFix(&backend.UnsupportedError{Backend: "afxdp", What: "AF_XDP sockets", Reason: "this kernel has none (" + err.Error() + ")",
			Fix: "use a kernel built with CONFIG_XDP_SOCKETS=y (Linux 4.18+), or --backend afpacket"}, "a kernel with CONFIG_XDP_SOCKETS")
	case sys.IsPermission(err) && stage == "socket":
		return inputerr.WithFix(backend.ErrorfAt("afxdp", "on "+ifc.name, "needs CAP_NET_RAW for an AF_XDP socket: run as root or `sudo setcap cap_net_raw,cap_net_admin,cap_bpf,cap_ipc_lock+ep $(which wpg)`: %w", err), "grant CAP_NET_RAW")
	case stage == "umem" && (xsk.IsNoBufs(err) || sys.IsPermission(err)):
		lim, _ := sys.MemlockLimit()
		return inputerr.WithFix(backend.ErrorfAt("afxdp", fmt.Sprintf("on %s queue %d", ifc.name, queue), "the kernel could not pin the %d-byte UMEM: %w (RLIMIT_MEMLOCK %s): raise it with `ulimit -l` (systemd: LimitMEMLOCK=), grant CAP_IPC_LOCK, or lower --ring-bytes / --ring-depth: %w", umem, sys.ErrMemlock, limitString(lim), err), "raise RLIMIT_MEMLOCK or grant CAP_IPC_LOCK")
	case stage == "bind" && xsk.IsBusy(err):
		return backend.ErrorfAt("afxdp", "on "+ifc.name, "queue %d is in use (EBUSY): another AF_XDP socket is bound to it, or the driver's queue is taken by a zero-copy user; `ss --xdp -p` lists XDP sockets and their processes where the kernel has CONFIG_XDP_SOCKETS_DIAG, and `ip link show %s` the XDP program of a receiver; pick another with --queue: %w", queue, ifc.name, err)
	case stage == "bind" && xsk.IsNotSupported(err) && mode == XDPNative:
		return inputerr.WithFix(&backend.UnsupportedError{Backend: "afxdp", What: "zero-copy (--xdp-mode native) on " + ifc.name,
			Reason: ifc.driverName() + " has no AF_XDP zero-copy support (" + err.Error() + ")",
			Fix:    "use --xdp-mode auto (falls back to copy mode) or --xdp-mode generic"}, "--xdp-mode auto or generic")
	case stage == "bind" && xsk.IsInvalid(err):
		return backend.ErrorfAt("afxdp", "on "+ifc.name, "bind to queue %d refused (EINVAL): the interface has %d TX / %d RX queues; check --queue, or `ethtool -l %s`: %w", queue, ifc.txQueues, ifc.rxQueues, ifc.name, err)
	case xsk.IsDown(err):
		return backend.ErrorfAt("afxdp", "on "+ifc.name, "the interface is down or gone: bring it up with `ip link set %s up`: %w", ifc.name, err)
	case sys.IsPermission(err):
		return inputerr.WithFix(backend.ErrorfAt("afxdp", "on "+ifc.name, "%w: needs CAP_NET_RAW (and CAP_NET_ADMIN for busy polling): run as root or grant them with setcap", err), "grant CAP_NET_RAW and CAP_NET_ADMIN")
	}
	return backend.ErrorfAt("afxdp", fmt.Sprintf("on %s queue %d", ifc.name, queue), "%w", err)
}

func limitString(v uint64) string {
	if v == ^uint64(0) {
		return "unlimited"
	}
	return strconv.FormatUint(v, 10) + " bytes"
}

// bindMode maps --xdp-mode to how a socket binds.
func bindMode(m string) xsk.Mode {
	switch m {
	case XDPNative:
		return xsk.ZeroCopy
	case XDPGeneric:
		return xsk.Copy
	}
	return xsk.Auto
}

// bindRetry is how long a bind refused with EBUSY is retried: a socket a
// previous run closed on the same queue holds it for about a second.
const bindRetry = 2 * time.Second

// Sender sends frames through one AF_XDP socket bound to one queue.
type Sender struct {
	sock     *xsk.Socket
	mem      []byte
	free     []uint64 // UMEM chunks not in flight, a stack: the last freed (cache-warm) goes first
	reserved int      // chunks handed out by the last Reserve (the top of free)
	maxFrame int
	// wire is the largest untagged frame the device takes (MTU + 14).
	wire      int
	checkTag  bool
	bufs      [][]byte // the last Reserve's buffers (for the VLAN check)
	submitted uint64
	completed uint64
	fullWaits uint64
	info      backend.Info
	closed    bool
	stats     sockStats // the socket's counters at Close
}

// newSender opens the sender of one worker on queue.
func newSender(ifc iface, queue int, o backend.Options) (*Sender, error) {
	if o.MaxFrame <= 0 {
		return nil, backend.Errorf("afxdp", "frame size %d must be positive", o.MaxFrame)
	}
	if err := CheckXDPMode(o.Net.XDPMode); err != nil {
		return nil, backend.Errorf("afxdp", "%w", err)
	}
	// A frame above a page fits no UMEM chunk whatever the MTU: say so
	// first, rather than advise an MTU that would then be refused.
	g, adjusted, err := TxGeometry(o.MaxFrame, o.Net.RingDepth, o.Net.RingBytes, os.Getpagesize())
	if err != nil {
		return nil, backend.Errorf("afxdp", "%w", err)
	}
	if err := backend.CheckMTU("afxdp", ifc.name, ifc.mtu, o); err != nil {
		return nil, err
	}
	wire := ifc.mtu + header.EthernetLen
	batch := o.Batch
	if batch <= 0 {
		batch = 64
	}
	sock, err := xsk.Open(xsk.Config{
		Ifindex: ifc.index, Queue: queue, ChunkSize: g.Chunk, Chunks: g.Depth,
		Fill: 2, Comp: g.Depth, TX: g.Depth, // the fill ring must exist; a sender leaves it empty
		Mode: bindMode(o.Net.XDPMode), NeedWakeup: true, NUMANode: ifc.numa,
		TxBudget: min(max(32, batch), g.Depth),
		BusyPoll: o.Net.BusyPoll, BusyPollBudget: batch,
		BindRetry: bindRetry,
	})
	if err != nil {
		return nil, openError(ifc, queue, o.Net.XDPMode, g.UMEMBytes(), err)
	}
	s := &Sender{
		sock: sock, mem: sock.UMEM(), maxFrame: o.MaxFrame, wire: wire, checkTag: o.MaxFrame > wire,
		free: make([]uint64, g.Depth), bufs: make([][]byte, batch),
	}
	for i := range s.free {
		// Pushed so that chunk 0 is on top: the first frames go out of
		// the start of the UMEM.
		s.free[i] = uint64(g.Depth-1-i) * uint64(g.Chunk)
	}
	s.info = backend.Info{
		Backend: "afxdp", Interface: ifc.name, NUMANode: ifc.numa, RingDepth: g.Depth,
		Mode: ModeCopy,
		Details: map[string]string{
			"queue":       strconv.Itoa(queue),
			"umem_bytes":  strconv.FormatInt(g.UMEMBytes(), 10),
			"chunk_bytes": strconv.Itoa(g.Chunk),
			"umem_numa":   sock.NUMA(),
			"batch":       strconv.Itoa(batch),
			"need_wakeup": "on (kick only when the TX ring asks)",
			"mtu":         strconv.Itoa(ifc.mtu),
		},
	}
	if sock.ZeroCopy() {
		s.info.Mode = ModeZeroCopy
	} else if o.Net.XDPMode != XDPGeneric {
		s.info.Reason = "zero-copy unavailable: " + ifc.driverName() + " of " + ifc.name + " has no AF_XDP zero-copy support, so the kernel bound the socket in copy mode, which copies each frame into an skb"
	}
	if b, why := sock.TxBudget(); b > 0 {
		s.info.Details["tx_budget"] = strconv.Itoa(b) + " descriptors per kick (XDP_MAX_TX_SKB_BUDGET)"
	} else if why != "" {
		s.info.Details["tx_budget"] = why
	}
	if o.Net.BusyPoll {
		s.info.Details["busy_poll"] = sock.BusyPoll()
	}
	if adjusted != "" {
		s.info.Adjusted = append(s.info.Adjusted, adjusted)
	}
	return s, nil
}

// reap takes the completed chunks back onto the free stack.
func (s *Sender) reap() {
	n := s.sock.Complete(s.free[len(s.free):cap(s.free)])
	s.free = s.free[:len(s.free)+n]
	s.completed += uint64(n)
}

// room is how many frames can be reserved now: free chunks and TX slots.
func (s *Sender) room(want int) int {
	n := min(want, len(s.free))
	if n > 0 {
		n = min(n, s.sock.TxFree(n))
	}
	return n
}

// Reserve hands out free UMEM chunks, the most recently completed first.
// When none is free it kicks the kernel (copy mode sends only inside a
// kick) and waits up to a millisecond before returning 0.
func (s *Sender) Reserve(bufs [][]byte) (int, error) {
	if len(bufs) > len(s.bufs) {
		bufs = bufs[:len(s.bufs)]
	}
	s.reap()
	n := s.room(len(bufs))
	if n == 0 {
		if s.sock.TxPending() > 0 && s.sock.NeedsKick() {
			if err := s.sock.Kick(); err != nil {
				return 0, s.ioError(err)
			}
		}
		s.reap()
		if n = s.room(len(bufs)); n == 0 {
			s.fullWaits++
			if err := s.sock.WaitWritable(time.Millisecond); err != nil {
				return 0, s.ioError(err)
			}
			s.reap()
			n = s.room(len(bufs))
		}
	}
	top := len(s.free) - 1
	for i := range n {
		a := s.free[top-i]
		bufs[i] = s.mem[a : a+uint64(s.maxFrame) : a+uint64(s.maxFrame)]
	}
	if s.checkTag {
		copy(s.bufs, bufs[:n])
	}
	s.reserved = n
	return n, nil
}

// Commit puts the first len(lens) reserved chunks on the TX ring (one
// producer store), and kicks the kernel when the ring asks for it. The
// rest of the reservation stays free.
func (s *Sender) Commit(lens []int) (int, error) {
	if len(lens) > s.reserved {
		return 0, backend.ErrorfAt("afxdp", "on "+s.info.Interface, "commit of %d frames, %d reserved", len(lens), s.reserved)
	}
	if s.checkTag {
		for i, l := range lens {
			if l > s.wire && !header.VLANTagged(s.bufs[i]) {
				return 0, backend.ErrorfAt("afxdp", "on "+s.info.Interface, "frame of %d bytes exceeds the MTU (%d bytes untagged; only VLAN-tagged frames may be %d)", l, s.wire, s.wire+header.VLANLen)
			}
		}
	}
	top := len(s.free) - 1
	for i, l := range lens {
		s.sock.TxPut(i, s.free[top-i], l)
	}
	s.free = s.free[:len(s.free)-len(lens)]
	s.reserved = 0
	s.sock.TxPublish(len(lens))
	s.submitted += uint64(len(lens))
	if s.sock.NeedsKick() {
		if err := s.sock.Kick(); err != nil {
			return len(lens), s.ioError(err)
		}
	}
	return len(lens), nil
}

func (s *Sender) ioError(err error) error {
	if xsk.IsDown(err) {
		return backend.ErrorfAt("afxdp", "on "+s.info.Interface, "%w (is the link up? `ip link set %s up`)", err, s.info.Interface)
	}
	return backend.ErrorfAt("afxdp", "on "+s.info.Interface, "%w", err)
}

// MaxFrame is the largest frame a buffer holds (Options.MaxFrame).
func (s *Sender) MaxFrame() int { return s.maxFrame }

// KeepsBuffers reports that a reserved chunk still holds what was last
// rendered into it (engine.BufferKeeper): the kernel only reads TX chunks.
func (s *Sender) KeepsBuffers() bool { return true }

// Info describes the socket: copy or zero-copy and why, queue, UMEM size
// and placement, the kick, completion and ring-full counters, and the
// kernel's (tx_invalid_descs, tx_ring_empty_descs).
func (s *Sender) Info() backend.Info {
	i := s.info.WithDetails(7)
	d := i.Details
	kicks, again := s.sock.Kicks()
	d["kicks"] = strconv.FormatUint(kicks, 10)
	d["kicks_again"] = strconv.FormatUint(again, 10)
	d["completions"] = strconv.FormatUint(s.completed, 10)
	d["ring_full_waits"] = strconv.FormatUint(s.fullWaits, 10)
	st := s.stats
	if !s.closed {
		st = readStats(s.sock)
	}
	st.details(d, false)
	return i
}

// sockStats are the kernel's counters of one or more sockets, or why
// they could not be read.
type sockStats struct {
	xsk.Stats
	err error
}

// readStats reads the counters of socks, summed.
func readStats(socks ...*xsk.Socket) sockStats {
	t := sockStats{Stats: xsk.Stats{Ring: true}}
	for _, s := range socks {
		st, err := s.Stats()
		if err != nil {
			t.err = err
			continue
		}
		t.Add(st)
	}
	return t
}

// details writes the counters into d: a receiver's (rx_dropped,
// rx_ring_full, rx_fill_ring_empty_descs, rx_invalid_descs, and
// kernel_drops, the frames the socket dropped: rx_dropped + rx_ring_full)
// or a sender's (tx_invalid_descs, tx_ring_empty_descs). The ring
// counters are left out where the kernel has none (before 5.9); a failed
// read says so in xdp_statistics.
func (st sockStats) details(d map[string]string, rx bool) {
	put := func(k string, v uint64) { d[k] = strconv.FormatUint(v, 10) }
	if st.err != nil {
		d["xdp_statistics"] = st.err.Error() + " (the counters below miss that socket's)"
	}
	if !rx {
		put("tx_invalid_descs", st.TxInvalid)
		if st.Ring {
			put("tx_ring_empty_descs", st.TxRingEmpty)
		}
		return
	}
	put("kernel_drops", st.RxDropped+st.RxRingFull)
	put("rx_dropped", st.RxDropped)
	put("rx_invalid_descs", st.RxInvalid)
	if st.Ring {
		put("rx_ring_full", st.RxRingFull)
		put("rx_fill_ring_empty_descs", st.RxFillEmpty)
	}
}

// flushTimeout bounds Flush.
const flushTimeout = 5 * time.Second

// Flush kicks and waits until every submitted frame has completed.
func (s *Sender) Flush() error {
	deadline := time.Now().Add(flushTimeout)
	for {
		s.reap()
		if s.completed >= s.submitted {
			return nil
		}
		if time.Now().After(deadline) {
			return backend.ErrorfAt("afxdp", "on "+s.info.Interface, "%d frames still not completed after %s (is the link up and the device transmitting?)", s.submitted-s.completed, flushTimeout)
		}
		if s.sock.TxPending() > 0 && s.sock.NeedsKick() {
			if err := s.sock.Kick(); err != nil {
				return s.ioError(err)
			}
		}
		if err := s.sock.WaitWritable(time.Millisecond); err != nil {
			return s.ioError(err)
		}
	}
}

// Close closes the socket and unmaps its rings and UMEM; it is idempotent.
func (s *Sender) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.stats = readStats(s.sock)
	return s.sock.Close()
}

// instance is afxdp opened for one job: the interface is looked up and
// its queues checked once, each worker binds a socket of its own.
type instance struct {
	ctx  context.Context
	o    backend.Options
	once sync.Once
	ifc  iface
	err  error

	txOnce sync.Once
	txErr  error
}

// open looks the interface up before any worker starts. The queues are
// checked per side: the TX queues the workers bind by checkTX (here when
// there are several workers, which only a sender has, so that a refusal is
// one error, not one per worker; else at NewSender), the RX queues at
// NewReceiver. A receiver is never held to the TX count.
func open(ctx context.Context, o backend.Options) (backend.Instance, error) {
	if err := check(o); err != nil {
		return nil, backend.Errorf("afxdp", "%w", err)
	}
	in := &instance{ctx: ctx, o: o}
	if err := in.lookup(); err != nil {
		return nil, err
	}
	if o.Workers > 1 {
		// Only a sender has several workers: refuse its queues here, in
		// one error, rather than once per worker from NewSender.
		if err := in.checkTX(); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// checkTX checks, once for all workers, that the interface has the TX
// queues they bind (--queue … --queue + workers - 1), before any socket
// opens. A receiver binds RX queues instead, which NewReceiver checks: an
// interface may have more of one kind than of the other.
func (in *instance) checkTX() error {
	in.txOnce.Do(func() {
		in.txErr = checkQueues(in.ifc, in.o.Net.Queue, max(in.o.Workers, 1), in.ifc.txQueues, "TX")
	})
	return in.txErr
}

func (in *instance) lookup() error {
	in.once.Do(func() { in.ifc, in.err = lookupInterface(in.o.Net.Interface) })
	return in.err
}

// NewSender opens worker w's socket on queue --queue + w.Index.
func (in *instance) NewSender(w backend.Worker) (backend.Sender, error) {
	if err := in.lookup(); err != nil {
		return nil, err
	}
	if err := in.checkTX(); err != nil {
		return nil, err
	}
	o := in.o
	o.MaxFrame = max(o.MaxFrame, w.MaxFrame)
	s, err := newSender(in.ifc, in.o.Net.Queue+w.Index, o)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// NewReceiver opens the receiving side on every RX queue from --queue.
func (in *instance) NewReceiver() (backend.Receiver, error) {
	if err := in.lookup(); err != nil {
		return nil, err
	}
	r, err := newReceiver(in.ctx, in.ifc, in.o)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (in *instance) Close() error { return nil }
