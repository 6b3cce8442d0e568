// Package backend defines the data-path interface every wpg backend implements
// and the registry that maps backend names (null, pcapfile, afpacket, pipe, shm,
// …) to their constructors.
//
// A backend is opened once per job (Registration.Open gives an Instance),
// and the instance hands out one Sender per engine worker. Sending is
// zero-copy where the path allows it: the engine asks the backend for writable
// frame buffers with Reserve (slots of a TX ring, of an shm ring, of a DMA
// buffer, or the backend's own staging buffers where the kernel API takes the
// caller's memory), renders frames straight into them, and hands the lengths
// back with Commit. Backends own no goroutines in the hot path and allocate
// nothing per frame.
package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/wpg-dev/wpg/header"
	"github.com/wpg-dev/wpg/internal/inputerr"
)

// Sender is one worker's transmit side of a data path.
type Sender interface {
	// Reserve fills bufs with up to len(bufs) writable frame buffers and
	// returns how many it filled. Each buffer has len == MaxFrame. It
	// returns 0 and a nil error when the path is momentarily full (the
	// engine retries), and an error when the path is broken (peer gone,
	// interface down).
	Reserve(bufs [][]byte) (int, error)
	// Commit transmits the first len(lens) buffers of the last Reserve,
	// lens[i] being the frame length written into bufs[i]. len(lens) may be
	// smaller than what Reserve returned (the source ran out); the other
	// buffers go back to the backend unsent. It returns the number of
	// frames the path accepted.
	Commit(lens []int) (int, error)
	// MaxFrame is the largest frame a buffer from Reserve can hold.
	MaxFrame() int
	// Info describes the instance for the report (mode, fallbacks, depth).
	Info() Info
	// Flush waits until committed frames have left the process (ring
	// drained, file synced). It is called once at the end of a run.
	Flush() error
	// Close releases every resource; it is idempotent.
	Close() error
}

// Receiver is the receiving side of a data path.
type Receiver interface {
	// Next fills views with received frames (valid until the next call)
	// and returns how many. It waits at most timeout for the first frame
	// and returns 0, nil on timeout; io.EOF when the sender has gone.
	Next(views [][]byte, timeout time.Duration) (int, error)
	Info() Info
	Close() error
}

// Info describes a backend instance for reports and logs.
type Info struct {
	Backend string `json:"backend"`
	// Mode is the way the path runs, e.g. "tx-ring", "sendmmsg", "pcapng".
	Mode string `json:"mode,omitempty"`
	// Reason says why Mode was chosen when it was not the default (a fallback).
	Reason    string `json:"reason,omitempty"`
	Interface string `json:"interface,omitempty"`
	// NUMANode is the NUMA node of the interface or memory; -1 when unknown.
	NUMANode int `json:"numa_node"`
	// RingDepth is the effective number of ring slots, 0 for ring-less paths.
	RingDepth int `json:"ring_depth,omitempty"`
	// Details carries backend-specific facts (pipe size, slot size, …).
	Details map[string]string `json:"details,omitempty"`
	// Hint is advice on a setting that measurably slows this path down,
	// with the flag that changes it, or on a setup that cannot work (a
	// receiver that nothing reached); the report prints it as a note.
	Hint string `json:"hint,omitempty"`
	// Adjusted says, in plain words, which requested settings the backend
	// changed and why ("--ring-depth 3 raised to 32: ..."); the report
	// prints each as a note.
	Adjusted []string `json:"adjusted,omitempty"`
}

// Options configure a backend instance for one job. The fields every path
// reads come first; each family of backends reads its own typed group
// (Net, File, Pipe, Mem) and ignores the others. Fields a backend needs but
// cannot satisfy give an error from Open.
type Options struct {
	Workers  int // total number of workers of the job
	MaxFrame int // largest frame the engine will commit (Worker.MaxFrame may raise it per worker)
	// MaxUntagged is the largest frame without a VLAN tag (packet
	// templates; 0 = not known), from stream UntaggedStream: network paths
	// check it against the MTU at open.
	MaxUntagged    int
	UntaggedStream string
	Batch          int // frames per Reserve the engine asks for

	// Verify is the receiver's verification ("on", "sample", "off") for a
	// receiver the sender starts itself (Peer.Mode PeerOwn; local paths).
	Verify string
	// Peer says where a local path's receiver is: started by the sender,
	// listening on a socket, or at the other end of a stream.
	Peer Peer
	// Listen is the receiving side's rendezvous socket (local paths).
	Listen string
	// Rendezvous, when not nil, is the listener on Listen on which the
	// peer protocol's control connection was accepted (job.Receive): the
	// receiver accepts its sender's data connection there instead of
	// listening itself.
	Rendezvous *net.UnixListener
	// Env is what the backend may use of the process: streams, the
	// launcher of receiver processes.
	Env Env

	Net    NetOptions    // afpacket (and, later, afxdp)
	File   FileOptions   // pcapfile
	Pipe   PipeOptions   // pipe
	Mem    MemOptions    // shm, cma, xpmem
	Device DeviceOptions // udmabuf
	DPDK   DPDKOptions   // dpdk
}

// DPDKOptions configure the dpdk backend (built with -tags dpdk); the port
// is Net.Interface (a port id or a device name) and the first TX queue
// Net.Queue.
type DPDKOptions struct {
	// EALArgs are the EAL's command-line arguments (--vdev, --no-huge,
	// -m, --file-prefix, -a PCI, …), without a program name.
	EALArgs []string
}

// NetOptions configure the network paths.
type NetOptions struct {
	Interface   string
	RingDepth   int
	RingBytes   int64
	NoTxRing    bool
	NoRxRing    bool // receiver: recvmmsg instead of the RX ring
	QdiscBypass bool
	TxCopy      string // TX ring: TxCopyAuto, TxCopyLinear or TxCopyFrags ("" = auto)
	Queue       int
	XDPMode     string
	BusyPoll    bool
}

// FileOptions configure the capture-file path.
type FileOptions struct {
	Output string // output path
	Format string // "pcap" or "pcapng" ("" = from the file name)
}

// PipeOptions configure the pipe path.
type PipeOptions struct {
	FIFO     string // FIFO path ("" = Env.Stdout / Env.Stdin, or a pipe to a receiver the sender starts)
	Vmsplice bool   // vmsplice instead of write
	Size     int    // capacity to ask for (0 = /proc/sys/fs/pipe-max-size)
}

// MemOptions configure the shared-memory paths (shm, cma, xpmem).
type MemOptions struct {
	RecvMode string // shm: "inplace" or "copy"; cma: "readv" or "writev"
	BusyWait bool   // shm: poll instead of sleeping when idle
	Slots    int    // ring or staging slots (0 = sized from MaxFrame)
}

// DeviceOptions configure the device paths (udmabuf).
type DeviceOptions struct {
	// Device is the DMA buffer's node: /dev/udmabufN (ikwzm's u-dma-buf)
	// or /dev/udmabuf (mainline, a buffer made of a sealed memfd).
	Device string
	// Sync opens a u-dma-buf node with O_SYNC (sync_mode then decides how
	// the CPU maps it).
	Sync bool
	// SyncMode, when not nil, is written to the u-dma-buf sync_mode
	// (0 … 7) before the open and restored after the run.
	SyncMode *int
	// SysRoot and DevRoot are where sysfs and /dev are ("" = /sys, /dev);
	// tests point them at a stand-in device.
	SysRoot, DevRoot string
}

// PeerMode is how a local path's sender reaches its receiver.
type PeerMode int

// Peer modes.
const (
	// PeerOwn: the sender starts its own receiver process (`wpg recv`
	// through Env.Launcher) and collects its report; the zero value.
	PeerOwn PeerMode = iota
	// PeerConnect: the sender connects to a receiver listening on
	// Peer.Sock (`wpg recv --listen SOCK`).
	PeerConnect
	// PeerStream: no rendezvous; the pipe path writes to Env.Stdout and
	// whoever reads the other end is the receiver. Socket paths refuse it.
	PeerStream
)

// Peer is the explicit choice of a local path's receiver (Options.Peer).
type Peer struct {
	Mode PeerMode
	Sock string // PeerConnect: the receiver's rendezvous socket
}

// String names the choice as the flags spell it.
func (p Peer) String() string {
	switch p.Mode {
	case PeerConnect:
		return "--connect " + p.Sock
	case PeerStream:
		return "standard output"
	}
	return "own receiver"
}

// Launcher builds the command of a receiver process that listens on the
// rendezvous socket sock and takes everything else from the sender's
// request over it (the peer protocol, docs/local-paths.md); nil runs this
// executable's `wpg recv --listen SOCK`.
type Launcher func(sock string) (*exec.Cmd, error)

// Env is what a backend may use of its process, given by the caller
// instead of taken from fds 0, 1 and 2.
type Env struct {
	Stdin  *os.File  // the pipe receiver's input when no FIFO is named
	Stdout *os.File  // the pipe sender's output with PeerStream
	Stderr io.Writer // where a receiver child's standard error goes (nil = kept for errors only)
	// Launcher starts receiver processes (nil = this executable's `recv`).
	Launcher Launcher
}

// Worker is what the engine tells an instance about one worker's sender.
type Worker struct {
	Index int // 0 … Options.Workers-1
	// MaxFrame is the largest frame this worker's source renders: at
	// least Options.MaxFrame when that is set.
	MaxFrame int
}

// Instance is a backend opened for one job: it owns what exists once per
// interface or per process (a peer process, a file, an XDP program, a DPDK
// port, a shared UMEM) and hands out one sender per worker and the
// receiving side. The engine calls NewSender on each worker's pinned
// thread, so memory a sender allocates is first touched there.
type Instance interface {
	// NewSender opens worker w's sender.
	NewSender(w Worker) (Sender, error)
	// NewReceiver opens the receiving side (Registration.Receives).
	NewReceiver() (Receiver, error)
	// Close releases what the instance owns, after its senders and
	// receivers are closed; it is idempotent.
	Close() error
}

// OpenFunc opens a backend instance. ctx is cancelled when the run stops
// (duration, signal, another worker's error): a sender waiting on a peer
// that takes nothing (alive, but stalled) gives up some seconds after that
// instead of holding the run open, and says so in its error.
type OpenFunc func(ctx context.Context, o Options) (Instance, error)

// SenderFactory opens one worker's sender from the job's options, o.MaxFrame
// already raised to the worker's (see Worker); ctx is the instance's.
type SenderFactory func(ctx context.Context, o Options) (Sender, error)

// ReceiverFactory opens a receiver from the job's options.
type ReceiverFactory func(ctx context.Context, o Options) (Receiver, error)

// Factories is the instance of a backend that holds nothing per job: each
// sender and the receiver are opened from the options alone.
// Factories{…}.Open is a Registration's Open.
type Factories struct {
	Sender   SenderFactory
	Receiver ReceiverFactory // nil: no receiving side
}

// Open returns an instance over f for o.
func (f Factories) Open(ctx context.Context, o Options) (Instance, error) {
	return &factoryInstance{ctx: ctx, o: o, f: f}, nil
}

type factoryInstance struct {
	ctx context.Context
	o   Options
	f   Factories
}

func (fi *factoryInstance) NewSender(w Worker) (Sender, error) {
	if fi.f.Sender == nil {
		return nil, fmt.Errorf("this backend has no sending side: %w", errors.ErrUnsupported)
	}
	o := fi.o
	if w.MaxFrame > o.MaxFrame {
		o.MaxFrame = w.MaxFrame
	}
	return fi.f.Sender(fi.ctx, o)
}

func (fi *factoryInstance) NewReceiver() (Receiver, error) {
	if fi.f.Receiver == nil {
		return nil, fmt.Errorf("this backend has no receiving side: %w", errors.ErrUnsupported)
	}
	return fi.f.Receiver(fi.ctx, fi.o)
}

func (fi *factoryInstance) Close() error { return nil }

// How an afpacket TX ring hands its frames to the kernel (Options.TxCopy).
const (
	// TxCopyAuto copies frames into the skb head on virtual devices (lo,
	// veth), whose receive path would copy a page fragment anyway, and
	// attaches ring pages as fragments on devices with hardware behind.
	TxCopyAuto = "auto"
	// TxCopyLinear always copies the frame into the skb head.
	TxCopyLinear = "linear"
	// TxCopyFrags always attaches the ring pages as fragments (zero-copy).
	// On lo the device releases the ring slot before the frame has been
	// received, so a reader that looks at the frame later (a capture, a
	// receiver without an RX ring) can see the slot's next frame.
	TxCopyFrags = "frags"
)

// CheckMTU refuses frames that the interface's MTU cannot carry: any frame
// over MTU + header + one VLAN tag, and an untagged stream's frames over
// MTU + header (o.MaxFrame, o.MaxUntagged, o.UntaggedStream). path names
// the backend in the message.
func CheckMTU(path, iface string, mtu int, o Options) error {
	wire := mtu + header.EthernetLen
	if o.MaxFrame > wire+header.VLANLen {
		return Errorf(path, "frames of %d bytes do not fit the MTU of %s (%d: at most %d bytes per frame, %d with a VLAN tag): use smaller frames or raise the MTU with `ip link set %s mtu %d`",
			o.MaxFrame, iface, mtu, wire, wire+header.VLANLen, iface, o.MaxFrame-header.EthernetLen)
	}
	if o.MaxUntagged > wire {
		return Errorf(path, "stream %q has frames of %d bytes without a VLAN tag, more than the MTU of %s carries (%d: at most %d bytes per untagged frame): make them smaller (--size, or size: in the template; a replayed capture's records go as captured) or raise the MTU with `ip link set %s mtu %d`",
			o.UntaggedStream, o.MaxUntagged, iface, mtu, wire, iface, o.MaxUntagged-header.EthernetLen)
	}
	return nil
}

// CheckTxCopy reports whether s names a TX copy mode ("" is auto).
func CheckTxCopy(s string) error {
	switch s {
	case "", TxCopyAuto, TxCopyLinear, TxCopyFrags:
		return nil
	}
	return fmt.Errorf("--tx-copy %q: use auto, linear or frags", s)
}

// Kind groups backends by what they reach: nothing (reference), a network
// interface, another local process, a device.
type Kind string

// Backend kinds.
const (
	KindReference Kind = "reference"
	KindNetwork   Kind = "network"
	KindLocal     Kind = "local"
	KindDevice    Kind = "device"
)

// Registration describes one backend.
type Registration struct {
	Name    string
	Kind    Kind
	Summary string
	// Open opens the backend for one job (see Instance); every backend
	// has a sending side.
	Open OpenFunc
	// Receives is true when the instance has a receiving side
	// (Instance.NewReceiver; `wpg recv --backend NAME`).
	Receives bool
	// Payload is true for paths that carry payload frames (local, device)
	// rather than network packets.
	Payload bool
	// SingleWorker is true when the path supports one worker only.
	SingleWorker bool
	// SingleWorkerWhy, when set, says why, as a clause that follows
	// "supports one worker only" (": a libpcap handle is one socket").
	SingleWorkerWhy string
	// NeedsPeer is true when a sender needs a receiving process (local
	// paths); `wpg bench` then starts one itself.
	NeedsPeer bool
	// Options names the backend-specific options this backend reads, on
	// either side, by their field names (see SpecificOptions). Setting any
	// other backend-specific option for this backend is an error that
	// names the backends reading it, so a new backend declares here every
	// such option it honours.
	Options []string
	// Check, when set, validates the options only this backend knows the
	// values of (--format, --recv-mode, …) before any worker starts: no
	// system calls, just the values, so that a bad one is a usage error and
	// not a failed run. Open checks them again.
	Check func(o Options) error
}

// SpecificOptions returns the names of the options that only some
// backends read, each its field's name in snake case, as job.Spec's JSON
// names it (Options.Net.RingDepth is "ring_depth", Options.Mem.RecvMode
// "recv_mode"; a client maps them to its own words, the CLI to --ring-depth);
// each Registration lists those it reads in Options. The rest (count,
// rate, workers, …) apply to every backend.
func SpecificOptions() []string {
	return []string{
		"interface", "ring_depth", "ring_bytes", "no_tx_ring", "no_rx_ring", "tx_copy", "qdisc_bypass",
		"queue", "xdp_mode", "busy_poll",
		"output", "format",
		"fifo", "vmsplice", "pipe_size", "connect", "listen", "recv_mode", "busy_wait", "slots",
		"device", "sync", "sync_mode",
		"dpdk_args",
	}
}

// Reads reports whether the backend reads the backend-specific option
// named option (a name from SpecificOptions).
func (r Registration) Reads(option string) bool {
	return slices.Contains(r.Options, option)
}

// Reading lists, sorted, the registered backends that read option.
func Reading(option string) []string {
	var names []string
	for _, r := range All() {
		if r.Reads(option) {
			names = append(names, r.Name)
		}
	}
	return names
}

var (
	mu       sync.RWMutex
	registry = map[string]Registration{}
	absent   = map[string]string{} // name → why this build lacks it
)

// Register adds a backend; it panics on a duplicate name (a programming error).
func Register(r Registration) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[r.Name]; dup {
		panic("backend: duplicate registration of " + r.Name)
	}
	registry[r.Name] = r
}

// RegisterAbsent records a backend that this build leaves out (cgo code
// behind a build tag), with why as a clause that says how to get it ("it
// is cgo code behind a build tag: build wpg with -tags pcap …"): Known
// lists it, Lookup refuses it with why. Package all calls it beside the
// build-tagged import that leaves the backend out.
func RegisterAbsent(name, why string) {
	mu.Lock()
	defer mu.Unlock()
	absent[name] = why
}

// ErrUnknown is returned (wrapped) by Lookup for a name nobody registered.
var ErrUnknown = errors.New("unknown backend")

// Lookup returns the registration for name, or an error listing the
// backends that exist.
func Lookup(name string) (Registration, error) {
	mu.RLock()
	r, ok := registry[name]
	why, known := absent[name]
	mu.RUnlock()
	if !ok {
		names := strings.Join(Names(), ", ")
		if known {
			return Registration{}, inputerr.Worded(ErrUnknown, fmt.Sprintf("%s %q in this build: %s; this build has %s (--backend NAME)", ErrUnknown, name, why, names),
				"is not in this build: "+why, "choose one of "+names)
		}
		return Registration{}, inputerr.Worded(ErrUnknown, fmt.Sprintf("%s %q: choose one of %s (--backend NAME)", ErrUnknown, name, names),
			"is not a backend of wpg", "choose one of "+names)
	}
	return r, nil
}

// Known lists, sorted, every backend name wpg documents: the registered
// ones and those this build leaves out (RegisterAbsent). Help text and
// docs/cli.md list these, so that they read the same for every build of
// wpg; Names lists what this build has.
func Known() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(registry)+len(absent))
	for n := range registry {
		names = append(names, n)
	}
	for n := range absent {
		if _, ok := registry[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Names lists the registered backends, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// All returns every registration, sorted by name.
func All() []Registration {
	var out []Registration
	for _, n := range Names() {
		r, _ := Lookup(n)
		out = append(out, r)
	}
	return out
}

// PeerReporter is implemented by senders that started or met a receiving
// process and can return its result after Close: a recv.Result as the
// peer protocol's answer carried it (recv.Result.MarshalPeer; the job
// decodes it with recv.UnmarshalPeer and merges the workers' with
// recv.Merge), nil when there is none.
type PeerReporter interface {
	PeerReport() []byte
}
