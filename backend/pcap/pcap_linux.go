//go:build pcap && linux && cgo

package pcap

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/backend/pcap/internal/libpcap"
	"github.com/wpg-dev/wpg/internal/inputerr"
	"github.com/wpg-dev/wpg/sysinfo"
)

func init() {
	backend.Register(backend.Registration{
		Name:         "pcap",
		Kind:         backend.KindNetwork,
		Summary:      "libpcap injection (pcap_inject), one worker; portable, one send() per frame",
		Open:         backend.Factories{Sender: func(ctx context.Context, o backend.Options) (backend.Sender, error) { return NewSender(ctx, o) }}.Open,
		SingleWorker: true,
		// More handles on one interface would only interleave their
		// frames, each worker renumbering its own; afpacket has workers.
		SingleWorkerWhy: ": a libpcap handle is one packet socket, and more of them on one interface only interleave their frames (for more workers use --backend afpacket)",
		Options:         []string{"interface"},
	})
}

// ModeInject is the sender's Info().Mode.
const ModeInject = "pcap_inject"

// maxRetries bounds the pauses one frame may wait for socket buffer space.
const maxRetries = 50000

// Sender injects frames on one interface through libpcap.
type Sender struct {
	in       *libpcap.Injector
	info     backend.Info
	maxFrame int
	closed   bool
}

// NewSender opens libpcap on o.Net.Interface for frames of up to
// o.MaxFrame bytes. The interface and the frame sizes are checked before
// libpcap is called.
func NewSender(_ context.Context, o backend.Options) (*Sender, error) {
	name := o.Net.Interface
	ifc, err := backend.UpInterface("pcap", name)
	if err != nil {
		return nil, err
	}
	if o.MaxFrame <= 0 {
		return nil, backend.Errorf("pcap", "frame size %d must be positive", o.MaxFrame)
	}
	if err := backend.CheckMTU("pcap", name, ifc.MTU, o); err != nil {
		return nil, err
	}
	batch := o.Batch
	if batch <= 0 {
		batch = 64
	}
	in, err := libpcap.Open(name, batch, o.MaxFrame)
	if err != nil {
		return nil, openError(name, err)
	}
	numa := -1
	if d, err := sysinfo.HostFS().Interface(name); err == nil {
		numa = d.NUMANode
	}
	return &Sender{in: in, maxFrame: o.MaxFrame, info: backend.Info{
		Backend: "pcap", Mode: ModeInject, Interface: name, NUMANode: numa,
		Details: map[string]string{
			"libpcap": libpcap.Version(),
			"batch":   strconv.Itoa(batch),
			"mtu":     strconv.Itoa(ifc.MTU),
		},
	}}, nil
}

// openError carries libpcap's failure through with the fix.
func openError(name string, err error) error {
	switch {
	case errors.Is(err, os.ErrPermission):
		return inputerr.WithFix(backend.ErrorfAt("pcap", "on "+name, "needs CAP_NET_RAW: run as root or `sudo setcap cap_net_raw+ep $(which wpg)`: %w", err), "grant CAP_NET_RAW")
	case errors.Is(err, libpcap.ErrNoSuchDevice):
		return backend.ErrorfAt("pcap", "on "+name, "%w; existing interfaces: %s (-i IFACE)", err, strings.Join(backend.InterfaceNames(), ", "))
	case errors.Is(err, libpcap.ErrNotUp):
		return backend.ErrorfAt("pcap", "on "+name, "%w: bring it up with `ip link set %s up`", err, name)
	}
	return backend.ErrorfAt("pcap", "on "+name, "%w", err)
}

// Reserve hands out the staging buffers.
func (s *Sender) Reserve(bufs [][]byte) (int, error) {
	return copy(bufs, s.in.Buffers()), nil
}

// Commit injects the first len(lens) buffers, one crossing into C; a
// frame the socket has no buffer space for waits there and is retried.
func (s *Sender) Commit(lens []int) (int, error) {
	if len(lens) == 0 {
		return 0, nil
	}
	n, err := s.in.Inject(lens, maxRetries)
	if err != nil {
		return n, backend.ErrorfAt("pcap", "on "+s.info.Interface, "%w", err)
	}
	return n, nil
}

// MaxFrame is the largest frame a buffer holds.
func (s *Sender) MaxFrame() int { return s.maxFrame }

// Info describes the sender: libpcap's version, the batch, the sends
// retried for want of socket buffer space.
func (s *Sender) Info() backend.Info {
	i := s.info.WithDetails(1)
	if s.in != nil && !s.closed {
		s.info.Details["inject_retries"] = strconv.FormatUint(s.in.Retries(), 10)
		i.Details["inject_retries"] = s.info.Details["inject_retries"]
	}
	return i
}

// Flush returns at once: pcap_inject returns when the kernel has the frame.
func (s *Sender) Flush() error { return nil }

// Close closes the libpcap handle; it is idempotent.
func (s *Sender) Close() error {
	if s.closed {
		return nil
	}
	s.Info()
	s.closed = true
	s.in.Close()
	return nil
}

// KeepsBuffers reports that a staging buffer still holds what was rendered
// into it last (engine.BufferKeeper): pcap_inject only reads it.
func (s *Sender) KeepsBuffers() bool { return true }
