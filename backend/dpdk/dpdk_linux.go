//go:build dpdk && linux && cgo

package dpdk

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/backend/dpdk/internal/rte"
	"github.com/wpg-dev/wpg/header"
	"github.com/wpg-dev/wpg/internal/inputerr"
)

func init() {
	backend.Register(backend.Registration{
		Name:     "dpdk",
		Kind:     backend.KindNetwork,
		Summary:  "DPDK 22.11 ethdev: worker i on TX queue --queue+i, frames rendered into mbufs, rte_eth_tx_burst; RX queue receiver",
		Open:     open,
		Receives: true,
		Options:  []string{"interface", "queue", "dpdk_args"},
		Check:    func(o backend.Options) error { return checkEALArgs(o.DPDK.EALArgs) },
	})
}

// Modes reported in Info().Mode.
const (
	ModeTxBurst = "tx-burst"
	ModeRxBurst = "rx-burst"
)

// Queue depths asked for (the device's limits adjust them) and the mbuf
// cache of a worker's pool.
const (
	txDesc    = 1024
	rxDesc    = 1024
	poolCache = 256
	// pushTries is how many rte_eth_tx_burst calls one crossing makes
	// for the rest of a burst the device did not take at once.
	pushTries = 16
	// maxBurst caps the frames of one rte_eth_tx_burst: a larger batch
	// is handed out in bursts of this size. On net_null, frames per CPU
	// second at 64 B measured 32: 20-24 M, 64: 21-26 M, 256: 16-18 M
	// (a burst as large as the pool's cache bypasses it).
	maxBurst = 64
	// stallTimeout is how long a device may take nothing of a burst
	// before the sender gives up.
	stallTimeout = 2 * time.Second
)

// ports marks the ports an instance of this process holds: a port is
// configured for one job at a time.
var ports = struct {
	sync.Mutex
	busy map[uint16]bool
}{busy: map[uint16]bool{}}

var poolSeq atomic.Uint64

// instance is the dpdk backend opened for one job: the EAL (once per
// process), the chosen port, configured and started on the first
// NewSender (TX queues Net.Queue … Net.Queue+Workers-1) or NewReceiver
// (RX queue 0), the workers' mbuf pools.
type instance struct {
	o      backend.Options
	port   rte.Port
	queue0 int

	once    sync.Once
	err     error
	started bool
	rxDepth int
	txDepth int
	link    rte.Link
	rxPool  *rte.Pool

	mu     sync.Mutex
	pools  []*rte.Pool
	closed bool
}

func open(_ context.Context, o backend.Options) (backend.Instance, error) {
	args := o.DPDK.EALArgs
	if err := checkEALArgs(args); err != nil {
		return nil, err
	}
	if o.Net.Queue < 0 {
		return nil, backend.Errorf("dpdk", "--queue %d: give the first TX queue, 0 or more", o.Net.Queue)
	}
	if wantsHugepages(args) && len(rte.Args()) == 0 {
		if n, err := freeHugepages("/sys"); err == nil && n == 0 {
			return nil, hugepageError(args)
		}
	}
	if err := rte.Init(args); err != nil {
		if errors.Is(err, rte.ErrAlreadyInitialised) {
			return nil, backend.Errorf("dpdk", "%w", err)
		}
		return nil, inputerr.WithFix(backend.Errorf("dpdk", "EAL initialisation with arguments %q failed: %w: check --dpdk-args (dpdk.eal_args; dpdk-testpmd --help lists the EAL options); another DPDK process with the same --file-prefix runs? give --in-memory or --file-prefix NAME; a NIC must be bound to vfio-pci (dpdk-devbind.py), a virtual device given with --vdev", strings.Join(args, " "), err), "check the EAL arguments")
	}
	port, err := findPort(o.Net.Interface)
	if err != nil {
		return nil, err
	}
	if n := o.Net.Queue + max(o.Workers, 1); n > port.MaxTxQueues {
		return nil, backend.Errorf("dpdk", "port %d (%s, %s) has at most %d TX queues; --queue %d with %d workers needs %d: use fewer workers or a lower --queue (net_af_packet: more with qpairs=N in --vdev)",
			port.ID, port.Name, port.Driver, port.MaxTxQueues, o.Net.Queue, max(o.Workers, 1), n)
	}
	ports.Lock()
	defer ports.Unlock()
	if ports.busy[port.ID] {
		return nil, backend.Errorf("dpdk", "port %d (%s) is in use by another job of this process: wait for it to end, or use another port", port.ID, port.Name)
	}
	ports.busy[port.ID] = true
	return &instance{o: o, port: port, queue0: o.Net.Queue}, nil
}

// findPort picks the port -i names (a port id or a device name); without
// -i, the EAL's only port.
func findPort(name string) (rte.Port, error) {
	all := rte.Ports()
	if len(all) == 0 {
		return rte.Port{}, backend.Errorf("dpdk", "the EAL found no port: give a virtual device (--dpdk-args \"--no-huge -m 512 --vdev net_null0\") or bind a NIC to vfio-pci (dpdk-devbind.py --bind=vfio-pci PCI) and allow it (-a PCI); the EAL's log: %s", rte.LogTail())
	}
	if name == "" {
		if len(all) == 1 {
			return all[0], nil
		}
		return rte.Port{}, backend.Errorf("dpdk", "the EAL has %d ports (%s): choose one with -i ID or -i NAME", len(all), portList(all))
	}
	c := parsePort(name)
	for _, p := range all {
		if (c.id >= 0 && int(p.ID) == c.id) || (c.id < 0 && p.Name == c.name) {
			return p, nil
		}
	}
	return rte.Port{}, backend.Errorf("dpdk", "no port %q: the EAL has %s (-i ID or -i NAME); a NIC must be bound to vfio-pci (dpdk-devbind.py) and allowed (-a PCI), a virtual device given with --vdev", name, portList(all))
}

func portList(ps []rte.Port) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprintf("port %d (%s, %s)", p.ID, p.Name, p.Driver)
	}
	return strings.Join(s, ", ")
}

// socket is the NUMA socket to allocate on: the port's, or any.
func (in *instance) socket() int {
	if in.port.Socket < 0 {
		return -1
	}
	return in.port.Socket
}

// setupTx configures the port for sending: queue0+Workers TX queues, no
// RX queue.
func (in *instance) setupTx() error {
	n := in.queue0 + max(in.o.Workers, 1) // at most port.MaxTxQueues (open)
	_, td, err := rte.Setup(in.port.ID, 0, n, 0, txDesc, in.socket(), nil)
	if err != nil {
		return backend.Errorf("dpdk", "port %d (%s): %w", in.port.ID, in.port.Name, err)
	}
	in.started, in.txDepth = true, td
	in.link = rte.LinkOf(in.port.ID)
	return nil
}

// checkFrames refuses frames the port's MTU does not carry.
func (in *instance) checkFrames(maxFrame int) error {
	const hdr, vlan = header.EthernetLen, header.VLANLen
	mtu := in.port.MTU
	if mtu <= 0 {
		return nil
	}
	if maxFrame > mtu+hdr+vlan {
		return backend.Errorf("dpdk", "frames of %d bytes do not fit the MTU of port %d (%s: %d, at most %d bytes per frame, %d with a VLAN tag): use smaller frames", maxFrame, in.port.ID, in.port.Name, mtu, mtu+hdr, mtu+hdr+vlan)
	}
	if in.o.MaxUntagged > mtu+hdr {
		return backend.Errorf("dpdk", "stream %q has frames of %d bytes without a VLAN tag, more than the MTU of port %d (%s: %d) carries: make them smaller (size: in the template)", in.o.UntaggedStream, in.o.MaxUntagged, in.port.ID, in.port.Name, mtu)
	}
	return nil
}

// mbufRoom is the data room of a worker's mbufs for frames of up to
// maxFrame bytes: the frame rounded up to a cache line, behind DPDK's
// headroom. Not DPDK's default of 2 KiB: the mbufs are only ever this
// worker's, sending frames of at most maxFrame bytes, and small ones keep a
// burst's mbufs on few pages and cache lines (64-byte frames: 384-byte
// pool elements, not 2,368; on net_null the 2 KiB room cost a TLB miss per
// mbuf written, about a fifth of the sending thread's time).
func mbufRoom(maxFrame int) (int, error) {
	room := (maxFrame+63)&^63 + rte.Headroom
	if room > 1<<16-1 {
		return 0, backend.Errorf("dpdk", "frames of %d bytes do not fit an mbuf (at most %d bytes behind its %d-byte headroom): use smaller frames", maxFrame, 1<<16-1-rte.Headroom, rte.Headroom)
	}
	return room, nil
}

// poolSize is the mbufs a worker's pool needs: a full TX ring waiting
// for completion, the burst in hand, a full per-lcore cache and slack,
// rounded up to 2^k-1 (the mempool's best size).
func poolSize(txDepth, burst int) int {
	need := txDepth + 2*burst + 2*poolCache + 64
	n := 1
	for n-1 < need {
		n <<= 1
	}
	return n - 1
}

// NewSender opens worker w's sender on TX queue queue0+w.Index; it runs on
// the worker's thread, which becomes an EAL thread (an lcore id of its
// own, so the pool's cache works) and allocates the pool.
func (in *instance) NewSender(w backend.Worker) (backend.Sender, error) {
	in.once.Do(func() { in.err = in.setupTx() })
	if in.err != nil {
		return nil, in.err
	}
	maxFrame := max(in.o.MaxFrame, w.MaxFrame)
	if maxFrame <= 0 {
		return nil, backend.Errorf("dpdk", "frame size %d must be positive", maxFrame)
	}
	if err := in.checkFrames(maxFrame); err != nil {
		return nil, err
	}
	burst := in.o.Batch
	if burst <= 0 {
		burst = maxBurst
	}
	burst = min(burst, maxBurst)
	room, err := mbufRoom(maxFrame)
	if err != nil {
		return nil, err
	}
	lcore, lerr := rte.RegisterThread()
	pool, err := rte.NewPool(fmt.Sprintf("wpg%d_tx%d", poolSeq.Add(1), w.Index), poolSize(in.txDepth, burst), poolCache, room, in.socket())
	if err != nil {
		if lerr == nil {
			rte.UnregisterThread()
		}
		return nil, backend.Errorf("dpdk", "worker %d: %w: give the EAL more memory (-m MB in --dpdk-args, or more hugepages)", w.Index, err)
	}
	in.mu.Lock()
	in.pools = append(in.pools, pool)
	in.mu.Unlock()
	queue := in.queue0 + w.Index
	s := &Sender{
		q: rte.NewTxQueue(in.port.ID, queue, pool, burst, maxFrame), maxFrame: maxFrame, port: in.port.ID,
		registered: lerr == nil,
		info: backend.Info{
			Backend: "dpdk", Mode: ModeTxBurst, Interface: in.port.Name, NUMANode: in.port.Socket, RingDepth: in.txDepth,
			Details: map[string]string{
				"port":         strconv.Itoa(int(in.port.ID)),
				"driver":       in.port.Driver,
				"queue":        strconv.Itoa(queue),
				"queues":       fmt.Sprintf("%d-%d (%d configured)", in.queue0, in.queue0+max(in.o.Workers, 1)-1, in.queue0+max(in.o.Workers, 1)),
				"socket":       strconv.Itoa(in.port.Socket),
				"link":         linkText(in.link),
				"burst":        strconv.Itoa(burst),
				"pool_mbufs":   strconv.Itoa(pool.Size),
				"mbuf_room":    strconv.Itoa(room - rte.Headroom),
				"dpdk":         rte.Version(),
				"eal_args":     strings.Join(rte.Args(), " "),
				"lcore":        strconv.Itoa(lcore),
				"tx_desc":      strconv.Itoa(in.txDepth),
				"max_tx_queue": strconv.Itoa(in.port.MaxTxQueues),
			},
		},
	}
	if lerr != nil {
		s.info.Details["lcore"] = "none (" + lerr.Error() + "): the pool's per-lcore cache is not used"
	}
	return s, nil
}

func linkText(l rte.Link) string {
	state := "down"
	if l.Up {
		state = "up"
	}
	if l.SpeedMbps == 0 || l.SpeedMbps == ^uint32(0) {
		return state + ", speed unknown"
	}
	return fmt.Sprintf("%s, %d Mbps", state, l.SpeedMbps)
}

// NewReceiver opens the receiving side on RX queue 0 of the port.
func (in *instance) NewReceiver() (backend.Receiver, error) {
	in.once.Do(func() { in.err = in.setupRx() })
	if in.err != nil {
		return nil, in.err
	}
	burst := in.o.Batch
	if burst <= 0 {
		burst = 64
	}
	return &Receiver{
		q: rte.NewRxQueue(in.port.ID, 0, min(burst, 1024)), port: in.port.ID,
		info: backend.Info{
			Backend: "dpdk", Mode: ModeRxBurst, Interface: in.port.Name, NUMANode: in.port.Socket, RingDepth: in.rxDepth,
			Details: map[string]string{
				"port": strconv.Itoa(int(in.port.ID)), "driver": in.port.Driver, "queue": "0",
				"link": linkText(in.link), "dpdk": rte.Version(), "eal_args": strings.Join(rte.Args(), " "),
				"pool_mbufs": strconv.Itoa(in.rxPool.Size), "rx_desc": strconv.Itoa(in.rxDepth),
			},
		},
	}, nil
}

// setupRx configures the port for receiving: RX queue 0 filling from a
// pool on the port's socket (and one TX queue, unused, which some drivers
// want).
func (in *instance) setupRx() error {
	room := 2048
	if in.port.MTU > 0 {
		room = max(room, in.port.MTU+header.EthernetLen+2*header.VLANLen)
	}
	pool, err := rte.NewPool(fmt.Sprintf("wpg%d_rx", poolSeq.Add(1)), 8191, poolCache, room+rte.Headroom, in.socket())
	if err != nil {
		return backend.Errorf("dpdk", "receiver: %w: give the EAL more memory (-m MB in --dpdk-args, or more hugepages)", err)
	}
	rd, _, err := rte.Setup(in.port.ID, 1, 1, rxDesc, txDesc, in.socket(), pool)
	if err != nil {
		pool.Free()
		return backend.Errorf("dpdk", "port %d (%s): %w", in.port.ID, in.port.Name, err)
	}
	in.rxPool, in.rxDepth, in.started = pool, rd, true
	in.link = rte.LinkOf(in.port.ID)
	return nil
}

// Close stops the port (its queues give their mbufs back), frees the
// pools and releases the port for the next job; it is idempotent.
func (in *instance) Close() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return nil
	}
	in.closed = true
	var err error
	if in.started {
		err = rte.Stop(in.port.ID)
	}
	for _, p := range in.pools {
		p.Free()
	}
	if in.rxPool != nil {
		in.rxPool.Free()
	}
	ports.Lock()
	delete(ports.busy, in.port.ID)
	ports.Unlock()
	if err != nil {
		return backend.Errorf("dpdk", "%w", err)
	}
	return nil
}

// Sender is one worker's TX queue.
type Sender struct {
	q          *rte.TxQueue
	port       uint16
	maxFrame   int
	registered bool
	info       backend.Info
	stalls     uint64 // commits that waited for the device
	closed     bool
}

// Reserve hands out the data rooms of up to len(bufs) mbufs, allocated in
// bulk (by the last Commit's crossing, so usually without one); 0 when
// the pool is empty for the moment.
func (s *Sender) Reserve(bufs [][]byte) (int, error) {
	return s.q.Reserve(bufs), nil
}

// Commit hands the first len(lens) reserved mbufs to rte_eth_tx_burst and
// offers what the device did not take again until it takes all, or
// until it has taken nothing for stallTimeout (an error: the link is down
// or the device stopped). The mbufs reserved and not rendered stay for
// the next Reserve.
func (s *Sender) Commit(lens []int) (int, error) {
	left := s.q.Commit(lens, pushTries)
	if left == 0 {
		return len(lens), nil
	}
	s.stalls++
	last, since := left, time.Now()
	for left > 0 {
		if left < last {
			last, since = left, time.Now()
		} else if time.Since(since) > stallTimeout {
			return len(lens) - left, backend.Errorf("dpdk", "port %d (%s) queue %s took none of %d frames for %s: is the link up (%s)?", s.port, s.info.Interface, s.info.Details["queue"], left, stallTimeout, s.info.Details["link"])
		}
		left = s.q.Push(pushTries)
	}
	return len(lens), nil
}

// MaxFrame is the largest frame a buffer holds.
func (s *Sender) MaxFrame() int { return s.maxFrame }

// KeepsBuffers reports that a reserved mbuf still holds the frame last
// rendered into it (engine.BufferKeeper): the worker's pool is its own,
// and a driver only reads a frame's bytes before it frees the mbuf back
// into that pool (one that prepends a header writes it into the headroom,
// and the commit puts data_off back). Large frames then get only the
// bytes that change rewritten.
func (s *Sender) KeepsBuffers() bool { return true }

// Info describes the sender, with its burst counters: bursts committed,
// rte_eth_tx_burst calls, the calls the device took only part of (then
// offered again), the bursts that waited for the device, and failed bulk
// allocations.
func (s *Sender) Info() backend.Info {
	i := s.info.WithDetails(6)
	d := i.Details
	if s.q != nil {
		c := s.q.Counters()
		d["tx_bursts"] = strconv.FormatUint(c.Bursts, 10)
		d["tx_burst_calls"] = strconv.FormatUint(c.Calls, 10)
		d["tx_retries"] = strconv.FormatUint(c.ShortCalls, 10)
		d["tx_waits"] = strconv.FormatUint(s.stalls, 10)
		d["mbuf_alloc_failures"] = strconv.FormatUint(c.AllocFails, 10)
		s.info.Details = d
	}
	return i
}

// Flush returns at once: every committed frame was taken by the device.
func (s *Sender) Flush() error { return nil }

// Close gives the mbufs back to the pool and the lcore id back to the EAL;
// it is idempotent. It runs on the worker's thread.
func (s *Sender) Close() error {
	if s.closed {
		return nil
	}
	s.Info() // keep the last counters
	s.closed = true
	s.q.Close()
	s.q = nil
	if s.registered {
		rte.UnregisterThread()
	}
	return nil
}

// Receiver takes frames from RX queue 0.
type Receiver struct {
	q      *rte.RxQueue
	port   uint16
	info   backend.Info
	closed bool
}

// Next fills views with the frames of the next burst (valid until the next
// call), polling for up to timeout.
func (r *Receiver) Next(views [][]byte, timeout time.Duration) (int, error) {
	if r.closed {
		return 0, backend.Errorf("dpdk", "receiver closed")
	}
	if n := r.q.Next(views); n > 0 {
		return n, nil
	}
	deadline := time.Now().Add(timeout)
	for {
		for range 64 {
			if n := r.q.Next(views); n > 0 {
				return n, nil
			}
		}
		if !time.Now().Before(deadline) {
			return 0, nil
		}
		time.Sleep(20 * time.Microsecond)
	}
}

// Info describes the receiver with the port's counters (imissed: frames
// the device had no descriptor for; rx_nombuf: no mbuf).
func (r *Receiver) Info() backend.Info {
	i := r.info.WithDetails(6)
	d := i.Details
	if r.q != nil {
		polls, seg := r.q.Polls()
		d["rx_polls"] = strconv.FormatUint(polls, 10)
		d["segmented_dropped"] = strconv.FormatUint(seg, 10)
		if st, err := rte.StatsOf(r.port); err == nil {
			d["port_ipackets"] = strconv.FormatUint(st.IPackets, 10)
			d["port_imissed"] = strconv.FormatUint(st.IMissed, 10)
			d["port_ierrors"] = strconv.FormatUint(st.IErrors, 10)
			d["port_rx_nombuf"] = strconv.FormatUint(st.RxNoMbuf, 10)
		}
		r.info.Details = d
	}
	return i
}

// Close frees the last burst; it is idempotent.
func (r *Receiver) Close() error {
	if r.closed {
		return nil
	}
	r.Info()
	r.closed = true
	r.q.Close()
	r.q = nil
	return nil
}
