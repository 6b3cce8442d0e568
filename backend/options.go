package backend

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"

	"github.com/wpg-dev/wpg/header"
)

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
