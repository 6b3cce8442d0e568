// Package backend defines the data-path interface every wpg backend implements
// and the registry that maps backend names (null, pcapfile, afpacket, pipe, shm,
// …) to their constructors.
//
// A backend instance belongs to exactly one engine worker. Sending is
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
	"sort"
	"strings"
	"sync"
	"time"
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
	// with the flag that changes it (the report prints it as a note).
	Hint string `json:"hint,omitempty"`
	// Adjusted says, in plain words, which requested settings the backend
	// changed and why ("--ring-depth 3 raised to 32: ..."); the report
	// prints each as a note.
	Adjusted []string `json:"adjusted,omitempty"`
}

// Options configure a backend instance. Fields a backend does not use are
// ignored by it; fields it needs but cannot satisfy give an error from Open.
type Options struct {
	Worker   int // index of the worker owning the instance
	Workers  int // total number of workers
	MaxFrame int // largest frame the engine will commit
	// MaxUntagged is the largest frame without a VLAN tag (packet
	// templates; 0 = not known), from stream UntaggedStream: network paths
	// check it against the MTU at open.
	MaxUntagged    int
	UntaggedStream string

	// Network paths.
	Interface   string
	Batch       int
	RingDepth   int
	RingBytes   int64
	NoTxRing    bool
	NoRxRing    bool // afpacket receiver: recvmmsg instead of the RX ring
	QdiscBypass bool
	TxCopy      string // afpacket TX ring: TxCopyAuto, TxCopyLinear or TxCopyFrags ("" = auto)
	Queue       int
	XDPMode     string
	BusyPoll    bool

	// Files.
	Output string // pcapfile: output path
	Format string // pcapfile: "pcap" or "pcapng"

	// Local paths.
	FIFO     string // pipe: FIFO path ("" = stdout/stdin)
	Vmsplice bool   // pipe: vmsplice instead of write
	Connect  string // shm, unix, cma, xpmem: rendezvous socket to connect to
	Listen   string // receiver side: rendezvous socket to listen on
	RecvMode string // shm: "inplace" or "copy"
	BusyWait bool   // shm: poll instead of sleeping when idle
	Device   string // udmabuf: device path
	Slots    int    // shm: ring slots
	Verify   string // local paths: the receiver's verification ("on", "sample", "off"), passed to a receiver the sender starts
	PipeSize int    // pipe: capacity to ask for (0 = /proc/sys/fs/pipe-max-size)
}

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

// CheckTxCopy reports whether s names a TX copy mode ("" is auto).
func CheckTxCopy(s string) error {
	switch s {
	case "", TxCopyAuto, TxCopyLinear, TxCopyFrags:
		return nil
	}
	return fmt.Errorf("--tx-copy %q: use auto, linear or frags", s)
}

// SenderFactory opens a sender. ctx is cancelled when the run stops
// (duration, signal, another worker's error): a sender waiting on a peer
// that takes nothing (alive, but stalled) gives up some seconds after that
// instead of holding the run open, and says so in its error.
type SenderFactory func(ctx context.Context, o Options) (Sender, error)

// ReceiverFactory opens a receiver.
type ReceiverFactory func(ctx context.Context, o Options) (Receiver, error)

// Kind groups backends as PRODUCT.md does.
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
	Name        string
	Kind        Kind
	Summary     string
	NewSender   SenderFactory
	NewReceiver ReceiverFactory // nil when the path has no receiving side
	// Payload is true for paths that carry payload frames (local, device)
	// rather than network packets.
	Payload bool
	// SingleWorker is true when the path supports one worker only.
	SingleWorker bool
	// NeedsPeer is true when a sender needs a receiving process (local
	// paths); `wpg bench` then starts one itself.
	NeedsPeer bool
	// Flags names the backend-specific options this backend reads, on
	// either side, by their command-line flag names without dashes (see
	// SpecificFlags). Setting any other backend-specific flag for this
	// backend is an error that names the backends reading it, so a new
	// backend declares here every such flag it honours.
	Flags []string
	// Check, when set, validates the options only this backend knows the
	// values of (--format, --recv-mode, …) before any worker starts: no
	// system calls, just the values, so that a bad one is a usage error and
	// not a failed run. Open checks them again.
	Check func(o Options) error
}

// SpecificFlags are the command-line flags (names without dashes) that
// only some backends read; each Registration lists those it reads in
// Flags. The rest (--count, --rate, --workers, …) apply to every backend.
var SpecificFlags = []string{
	"interface", "ring-depth", "ring-bytes", "no-tx-ring", "no-rx-ring", "tx-copy", "qdisc-bypass",
	"queue", "xdp-mode", "busy-poll",
	"output", "format",
	"fifo", "vmsplice", "pipe-size", "connect", "listen", "recv-mode", "busy-wait", "slots",
}

// Reads reports whether the backend reads the backend-specific flag
// named flag (a name from SpecificFlags).
func (r Registration) Reads(flag string) bool {
	for _, o := range r.Flags {
		if o == flag {
			return true
		}
	}
	return false
}

// Reading lists, sorted, the registered backends that read flag.
func Reading(flag string) []string {
	var names []string
	for _, r := range All() {
		if r.Reads(flag) {
			names = append(names, r.Name)
		}
	}
	return names
}

var (
	mu       sync.RWMutex
	registry = map[string]Registration{}
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

// ErrUnknown is returned (wrapped) by Lookup for a name nobody registered.
var ErrUnknown = errors.New("unknown backend")

// Lookup returns the registration for name, or an error listing the
// backends that exist.
func Lookup(name string) (Registration, error) {
	mu.RLock()
	r, ok := registry[name]
	mu.RUnlock()
	if !ok {
		if why, known := notBuilt(name); known {
			return Registration{}, fmt.Errorf("%w %q in this build: %s; this build has %s (--backend NAME)", ErrUnknown, name, why, strings.Join(Names(), ", "))
		}
		return Registration{}, fmt.Errorf("%w %q: choose one of %s (--backend NAME)", ErrUnknown, name, strings.Join(Names(), ", "))
	}
	return r, nil
}

// Known lists, sorted, every backend name wpg documents, whether or not
// this build registered it. Help text and docs/cli.md list these, so they
// read the same for every build; Names lists what this build has.
var Known = []string{"afpacket", "afxdp", "cma", "dpdk", "memcpy", "null", "pcap", "pcapfile", "pipe", "shm", "udmabuf", "unix", "xpmem"}

// notBuilt says why a known backend is not registered, and whether name is
// known at all.
func notBuilt(name string) (string, bool) {
	switch name {
	case "pcap":
		return "it is cgo code behind a build tag: build wpg with -tags pcap (needs libpcap-dev)", true
	case "dpdk":
		return "it is cgo code behind a build tag: build wpg with -tags dpdk (needs libdpdk-dev)", true
	case "afxdp", "udmabuf":
		return "it is planned (docs/architecture.md) and not built yet", true
	}
	for _, k := range Known {
		if k == name {
			return "this build leaves it out: build wpg from ./cmd/wpg, which imports backend/all", true
		}
	}
	return "", false
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
// process and can return its final report (JSON) after Close.
type PeerReporter interface {
	PeerReport() []byte
}
