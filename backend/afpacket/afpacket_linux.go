//go:build linux

package afpacket

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/backend/afpacket/internal/tpacket"
	"github.com/wpg-dev/wpg/header"
	"github.com/wpg-dev/wpg/internal/inputerr"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/units"
)

// iface is a validated interface.
type iface struct {
	name     string
	index    int
	mtu      int
	numa     int
	virtual  bool // no backing device: lo, veth, …
	loopback bool
	rps      bool // receive packet steering to other CPUs (or unknown)
}

// lookupInterface checks that name exists and is up, as the kernel of
// this thread's network namespace reports it (backend.LookupLink: right
// on a thread that entered another namespace, where /sys still shows the
// first's); it needs no privileges.
func lookupInterface(name string) (iface, error) {
	l, err := backend.LookupLink("afpacket", name)
	if err != nil {
		return iface{}, err
	}
	return iface{name: l.Name, index: l.Index, mtu: l.MTU, numa: l.NUMANode, virtual: l.Virtual, loopback: l.Loopback(), rps: l.RPS}, nil
}

// openError turns a socket setup failure into an error that names the
// fix; orElse follows the RLIMIT_MEMLOCK advice (the receiver's other way
// out, "; or receive without a ring: --no-rx-ring").
func openError(ifname string, err error, orElse string) error {
	switch {
	case errors.Is(err, sys.ErrMemlock):
		return inputerr.WithFix(backend.ErrorfAt("afpacket", "on "+ifname, "%w: raise it with `ulimit -l` (systemd: LimitMEMLOCK=), grant CAP_IPC_LOCK, or lower --ring-bytes / --ring-depth%s", err, orElse), "raise RLIMIT_MEMLOCK or grant CAP_IPC_LOCK")
	case sys.IsPermission(err):
		return inputerr.WithFix(backend.ErrorfAt("afpacket", "on "+ifname, "needs CAP_NET_RAW: run as root or `sudo setcap cap_net_raw,cap_ipc_lock+ep $(which wpg)`: %w", err), "grant CAP_NET_RAW")
	}
	return backend.ErrorfAt("afpacket", "on "+ifname, "%w", err)
}

// Sender sends frames on one interface through a TX ring or sendmmsg.
type Sender struct {
	ring     *tpacket.TxRing
	mm       *tpacket.Mmsg
	info     backend.Info
	maxFrame int
	// wire is the largest untagged frame the device takes (MTU + 14);
	// frames above it must carry a VLAN tag (checked when maxFrame > wire).
	wire     int
	checkTag bool
	reserved [][]byte
	closed   bool
}

// NewSender opens a sender on o.Net.Interface for frames of up to o.MaxFrame
// bytes. Everything is validated before the first system call; on error
// no socket or mapping is left open.
func NewSender(_ context.Context, o backend.Options) (*Sender, error) {
	ifc, err := lookupInterface(o.Net.Interface)
	if err != nil {
		return nil, err
	}
	return newSenderOn(ifc, loopbackFrags(ifc), o)
}

// newSenderOn opens a sender on the validated interface ifc; loFrags is
// loopbackFrags(ifc).
func newSenderOn(ifc iface, loFrags bool, o backend.Options) (*Sender, error) {
	var err error
	if o.MaxFrame <= 0 {
		return nil, backend.Errorf("afpacket", "frame size %d must be positive", o.MaxFrame)
	}
	if err := backend.CheckMTU("afpacket", ifc.name, ifc.mtu, o); err != nil {
		return nil, err
	}
	wire := ifc.mtu + header.EthernetLen
	batch := o.Batch
	if batch <= 0 {
		batch = 64
	}
	if err := backend.CheckTxCopy(o.Net.TxCopy); err != nil {
		return nil, backend.Errorf("afpacket", "%w", err)
	}
	var g Geometry
	// On veth and other virtual devices the forwarding path copies
	// ring-page fragments into new pages (skb_copy_ubufs); copying the
	// frame into the skb head at send time is cheaper (see
	// tpacket.TxConfig.Linear). lo hands fragments to its receive path
	// uncopied, which reads them within the same send call (see
	// loopbackFrags): there frames from loFragMin bytes go out as
	// fragments, smaller ones (cheaper to copy than to pin) linear.
	linear, fragMin := ifc.virtual, 0
	if loFrags {
		fragMin = loFragMin
	}
	switch o.Net.TxCopy {
	case backend.TxCopyLinear:
		linear, fragMin = true, 0
	case backend.TxCopyFrags:
		linear, fragMin = false, 0
	}
	if !o.Net.NoTxRing {
		room := o.MaxFrame
		if linear {
			room += tpacket.VnetHdrLen
		}
		if g, err = TxGeometry(room, o.Net.RingDepth, o.Net.RingBytes, os.Getpagesize()); err != nil {
			return nil, backend.Errorf("afpacket", "%w", err)
		}
	}
	s := &Sender{
		maxFrame: o.MaxFrame,
		wire:     wire,
		checkTag: o.MaxFrame > wire,
		reserved: make([][]byte, batch),
		info: backend.Info{
			Backend: "afpacket", Interface: ifc.name, NUMANode: ifc.numa,
			Details: map[string]string{
				"mtu":          strconv.Itoa(ifc.mtu),
				"qdisc_bypass": strconv.FormatBool(o.Net.QdiscBypass),
				"batch":        strconv.Itoa(batch),
			},
		},
	}
	if !o.Net.NoTxRing {
		ring, err := tpacket.NewTxRing(tpacket.TxConfig{
			Ifindex: ifc.index, Slot: g.Slot, BlockSize: g.BlockSize, Blocks: g.Blocks,
			QdiscBypass: o.Net.QdiscBypass, Lock: true, Linear: linear, FragMin: fragMin,
		})
		switch {
		case err == nil:
			s.ring = ring
			s.info.Mode = ModeTxRing
			s.info.RingDepth = ring.Depth()
			s.info.Details["slot_bytes"] = strconv.Itoa(g.Slot)
			s.info.Details["ring_bytes"] = strconv.Itoa(ring.Bytes())
			s.info.Details["tx_copy"] = txCopyNote(ring, o.Net.TxCopy, ifc, loFrags)
			s.info.Hint = ringHint(ring, o.MaxFrame)
			if why := g.Adjustment(o.Net.RingDepth, o.Net.RingBytes); why != "" {
				s.info.Adjusted = append(s.info.Adjusted, why)
			}
			return s, nil
		case errors.Is(err, sys.ErrNotSupported) || sys.IsNoMemory(err):
			s.info.Reason = "TX ring unavailable, fell back to sendmmsg: " + err.Error()
		default:
			return nil, openError(ifc.name, err, "")
		}
	} else {
		s.info.Reason = "--no-tx-ring"
	}
	mm, err := tpacket.NewMmsg(ifc.index, batch, o.MaxFrame, o.Net.QdiscBypass)
	if err != nil {
		return nil, openError(ifc.name, err, "")
	}
	s.mm = mm
	s.info.Mode = ModeSendmmsg
	return s, nil
}

// Reserve hands out the next free ring slots (ring mode) or the staging
// buffers (sendmmsg mode). When the ring is full it kicks the kernel and
// waits up to a millisecond for a slot before returning 0.
func (s *Sender) Reserve(bufs [][]byte) (int, error) {
	if len(bufs) > len(s.reserved) {
		bufs = bufs[:len(s.reserved)]
	}
	if s.mm != nil {
		n := copy(bufs, s.mm.Buffers())
		for i := range n {
			bufs[i] = bufs[i][:s.maxFrame]
		}
		if s.checkTag {
			copy(s.reserved, bufs[:n])
		}
		return n, nil
	}
	n := s.ring.Reserve(bufs)
	if n == 0 {
		if err := s.ring.Kick(false); err != nil {
			return 0, backend.ErrorfAt("afpacket", "on "+s.info.Interface, "%w", err)
		}
		if n = s.ring.Reserve(bufs); n == 0 {
			if err := s.ring.WaitWritable(time.Millisecond); err != nil {
				return 0, err
			}
			n = s.ring.Reserve(bufs)
		}
	}
	for i := range n {
		bufs[i] = bufs[i][:s.maxFrame]
	}
	if s.checkTag {
		copy(s.reserved, bufs[:n])
	}
	return n, nil
}

// Commit sends the first len(lens) reserved frames: ring slots are marked
// and kicked with one send(); staging buffers go out with sendmmsg.
func (s *Sender) Commit(lens []int) (int, error) {
	if s.checkTag {
		for i, l := range lens {
			if l > s.wire && !header.VLANTagged(s.reserved[i]) {
				return 0, backend.ErrorfAt("afpacket", "on "+s.info.Interface, "frame of %d bytes exceeds the MTU (%d bytes untagged; only VLAN-tagged frames may be %d)", l, s.wire, s.wire+header.VLANLen)
			}
		}
	}
	if s.mm != nil {
		n, err := s.mm.Send(lens)
		if err != nil {
			err = backend.ErrorfAt("afpacket", "on "+s.info.Interface, "%w", err)
		}
		return n, err
	}
	if err := s.ring.Commit(lens); err != nil {
		// The frames stay requested in the ring; the error (interface
		// gone or down) ends the run.
		return len(lens), backend.ErrorfAt("afpacket", "on "+s.info.Interface, "%w", err)
	}
	return len(lens), nil
}

// loFragMin is the frame size from which frames go to lo as fragments
// (see loopbackFrags).
const loFragMin = 256

// Rings whose frames the kernel copies out (linear) and that are larger
// than a core's cache cost the copy a cache miss per line: at 1500 B the
// 8 MiB default ring measured 0.6-0.8x the rate of a 512 KiB one on veth
// (docs/perf.md, AF_PACKET baseline).
const (
	hintFrameMin = 1024
	hintRingMax  = 1 << 20   // rings above this get the hint
	hintRingFit  = 512 << 10 // the ring it suggests: half a 1 MiB L2
)

// ringHint advises a shallower ring when frames are copied out of a ring
// too large to stay in the cache.
func ringHint(ring *tpacket.TxRing, maxFrame int) string {
	if !ring.Linear() || ring.FragMin() > 0 || maxFrame < hintFrameMin || ring.Bytes() <= hintRingMax {
		return ""
	}
	depth := max(hintRingFit/(ring.Bytes()/ring.Depth()), 1)
	return fmt.Sprintf("the kernel copies each frame out of a %s ring (%d slots): larger than the CPU's cache, so every copy misses; --ring-depth %d (a ring of %s) measured 1.3-1.7x faster at 1500 B on veth (docs/afpacket.md)",
		units.FormatSize(int64(ring.Bytes())), ring.Depth(), depth, units.FormatSize(int64(depth*(ring.Bytes()/ring.Depth()))))
}

// loopbackFrags reports whether ring pages can go to lo as fragments.
// loopback_xmit releases the ring slot (it orphans the skb) when it queues
// the frame for reception; the receive softirq, which copies fragments
// for every reader (taps, sockets), then runs on the same CPU when the
// send path re-enables bottom halves, before the kick returns and before
// wpg can rewrite the slot a ring lap later: a receiver reading 2 s late
// from a 16-slot ring rewritten thousands of times over saw every frame
// intact (docs/perf.md, AF_PACKET). With RPS the frame is
// queued to another CPU and read there later, and where kernel threads
// process the backlog (PREEMPT_RT, thread_backlog_napi on the command
// line, Linux 6.10+) it is read later too: then frames stay linear.
//
// Measured on lo (pairs of 2-4 s runs): 64 B frames linear
// 1.04-1.09x the rate of fragments, 256 B 1.03-1.05x slower, 512 B and up
// 1.15-1.4x slower; loFragMin sits at the crossover.
func loopbackFrags(ifc iface) bool {
	return ifc.loopback && !ifc.rps && !backlogThreaded()
}

// backlogThreaded reports whether the kernel processes the receive backlog
// in per-CPU threads rather than in the sending thread's softirq.
func backlogThreaded() bool {
	if b, err := os.ReadFile("/sys/kernel/realtime"); err == nil && strings.TrimSpace(string(b)) == "1" {
		return true
	}
	cmdline, _ := os.ReadFile("/proc/cmdline")
	return strings.Contains(string(cmdline), "thread_backlog_napi")
}

// txCopyNote says how the ring hands frames to the kernel, and why;
// loFrags is loopbackFrags(ifc).
func txCopyNote(ring *tpacket.TxRing, asked string, ifc iface, loFrags bool) string {
	linear := ring.Linear()
	switch {
	case linear && ring.FragMin() > 0:
		return fmt.Sprintf("lo: frames of %d bytes or more go as fragments of the ring pages (the receive path, run before the send call returns, copies them for any reader), smaller ones are copied into the skb head (cheaper than pinning a page)", ring.FragMin())
	case linear && asked == backend.TxCopyLinear:
		return "linear (--tx-copy linear: the frame is copied into the skb head)"
	case linear && ifc.loopback:
		return "linear (lo with RPS or a threaded backlog: the frame is copied into the skb head, since it is received later, after the ring slot is released)"
	case linear:
		return "linear (virtual device: the frame is copied into the skb head; the receive side would copy a page fragment anyway)"
	case asked == backend.TxCopyLinear:
		return "zero-copy (ring pages attached as fragments: the kernel refused PACKET_VNET_HDR, so --tx-copy linear could not be honoured)"
	case loFrags:
		return "zero-copy (--tx-copy frags on lo: ring pages attached as fragments; the receive path, run before the send call returns, copies them for any reader)"
	case ifc.loopback:
		return "zero-copy (--tx-copy frags on lo with RPS or a threaded backlog: lo releases a slot when it queues the frame, received later, so a reader may see the slot's next frame)"
	case ifc.virtual:
		return "zero-copy (--tx-copy frags: ring pages attached as fragments; the device copies them into new pages)"
	}
	return "zero-copy (ring pages attached as fragments)"
}

// MaxFrame is the largest frame a buffer holds (Options.MaxFrame).
func (s *Sender) MaxFrame() int { return s.maxFrame }

// Info describes the instance: mode (tx-ring or sendmmsg) and why,
// effective ring depth, NUMA node of the interface.
func (s *Sender) Info() backend.Info {
	i := s.info
	if s.ring != nil {
		kicks, full := s.ring.Kicks()
		i = i.WithDetails(2)
		i.Details["kicks"] = strconv.FormatUint(kicks, 10)
		i.Details["kicks_sndbuf_full"] = strconv.FormatUint(full, 10)
	}
	return i
}

// flushTimeout bounds Flush.
const flushTimeout = 5 * time.Second

// Flush waits until every frame in the ring has been handed to the device.
func (s *Sender) Flush() error {
	if s.ring == nil {
		return nil
	}
	busy, err := s.ring.Drain(flushTimeout)
	if err != nil {
		return backend.ErrorfAt("afpacket", "on "+s.info.Interface, "flush: %w", err)
	}
	if busy > 0 {
		return backend.ErrorfAt("afpacket", "on "+s.info.Interface, "%d frames still in the TX ring after %s (is the link up and the device transmitting?)", busy, flushTimeout)
	}
	return nil
}

// Close closes the socket and unmaps the ring; it is idempotent.
func (s *Sender) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.ring != nil {
		return s.ring.Close()
	}
	if s.mm != nil {
		return s.mm.Close()
	}
	return nil
}

// instance is afpacket opened for one job: the interface is validated and
// probed once (MTU, NUMA node, virtual or not, the lo fragment rule) for
// all workers, and each worker gets a TX ring (or sendmmsg socket) of its
// own.
type instance struct {
	ctx     context.Context
	o       backend.Options
	once    sync.Once
	ifc     iface
	loFrags bool
}

// open looks the interface up once for the job's workers and its
// receiver: a missing or down one is the job's error, given once
// ("afpacket: interface …"), not each worker's.
func open(ctx context.Context, o backend.Options) (backend.Instance, error) {
	ifc, err := lookupInterface(o.Net.Interface)
	if err != nil {
		return nil, err
	}
	return &instance{ctx: ctx, o: o, ifc: ifc}, nil
}

// NewSender opens worker w's sender; the first call settles the lo
// fragment rule for every worker.
func (in *instance) NewSender(w backend.Worker) (backend.Sender, error) {
	in.once.Do(func() { in.loFrags = loopbackFrags(in.ifc) })
	o := in.o
	o.MaxFrame = max(o.MaxFrame, w.MaxFrame)
	s, err := newSenderOn(in.ifc, in.loFrags, o)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (in *instance) NewReceiver() (backend.Receiver, error) {
	r, err := newReceiverOn(in.ifc, in.o)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (in *instance) Close() error { return nil }

// KeepsBuffers reports that a reserved buffer still holds what was last
// rendered into it (engine.BufferKeeper): the kernel only reads TX-ring
// slots, and sendmmsg only reads the staging buffers.
func (s *Sender) KeepsBuffers() bool { return true }
