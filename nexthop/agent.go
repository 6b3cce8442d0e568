package nexthop

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultTimeout is how long Resolve waits for a gateway's answer when
// Options.Timeout is 0: a device answers ARP in microseconds, and a
// loaded router within a second.
const DefaultTimeout = 3 * time.Second

// retryEvery is how often Resolve asks again while it waits.
const retryEvery = 200 * time.Millisecond

// Options tune Open.
type Options struct {
	// Timeout bounds Resolve (0: DefaultTimeout).
	Timeout time.Duration
	// Tags are the VLAN tags of the port's frames, outer first (none:
	// untagged): the agent asks with them and answers only the requests
	// that carry them.
	Tags []Tag
}

// Agent is a port's neighbour agent: it resolves the gateway's MAC
// (Resolve) and, until Close, answers requests for the port's address
// when the kernel does not hold that address on the interface. Its
// methods are safe for concurrent use.
type Agent struct {
	iface string
	mac   net.HardwareAddr
	port  Port
	// kernel is true when the kernel holds the port's address on the
	// interface: it answers for it, the agent does not.
	kernel  bool
	timeout time.Duration
	tags    []Tag
	conn    conn

	mu     sync.Mutex
	want   netip.Addr
	got    chan net.HardwareAddr
	closed bool

	answered atomic.Uint64
	done     chan struct{}
	err      error // the read loop's error, once done
}

// conn is the agent's link: an AF_PACKET socket on Linux.
type conn interface {
	// read reads one frame; write sends one (to the MAC its header names).
	read(b []byte) (int, error)
	write(b []byte) error
	Close() error
}

// Interface is the name of the agent's interface.
func (a *Agent) Interface() string { return a.iface }

// MAC is the interface's hardware address: the source of the port's
// frames and of its answers.
func (a *Agent) MAC() net.HardwareAddr { return a.mac }

// Tags are the VLAN tags the agent asks and answers with (none: untagged).
func (a *Agent) Tags() []Tag { return a.tags }

// Port is the agent's port.
func (a *Agent) Port() Port { return a.port }

// Answering reports whether the agent answers for the port's address
// (false: the kernel holds it and answers itself).
func (a *Agent) Answering() bool { return !a.kernel }

// Answered is the number of requests for the port's address the agent
// has answered.
func (a *Agent) Answered() uint64 { return a.answered.Load() }

// NoAnswerError is a gateway that did not answer within the timeout.
type NoAnswerError struct {
	Interface string
	Port      Port
	Timeout   time.Duration
	// Tags are the VLAN tags it was asked with (none: untagged).
	Tags []Tag
}

func (e *NoAnswerError) Error() string {
	return fmt.Sprintf("port %s (%s): gateway %s did not answer %s within %s; %s", e.Interface, e.Port.Addr, e.Port.Gateway, e.proto(), e.Timeout, e.Fix())
}

// proto is the protocol asked with, and the tags when there are any.
func (e *NoAnswerError) proto() string {
	if len(e.Tags) == 0 {
		return e.Port.Proto()
	}
	return e.Port.Proto() + " tagged " + FormatTags(e.Tags)
}

// Reason is what went wrong, without the fix.
func (e *NoAnswerError) Reason() string {
	return fmt.Sprintf("gateway %s did not answer %s on %s within %s", e.Port.Gateway, e.proto(), e.Interface, e.Timeout)
}

// Fix says what to check.
func (e *NoAnswerError) Fix() string {
	fix := fmt.Sprintf("check that the device is up and holds %s on the link of %s (ip addr on the device), that the link is connected and up, and that %s is the gateway meant", e.Port.Gateway, e.Interface, e.Port.Gateway)
	if len(e.Tags) > 0 {
		fix += fmt.Sprintf(", on the VLAN the streams' tags name (%s: the device's subinterface of that VLAN)", FormatTags(e.Tags))
	}
	return fix
}

// Resolve asks for the gateway's MAC on the port's link, again every
// 200 ms, until an answer comes, ctx ends, or the timeout runs out (a
// *NoAnswerError). A request the gateway sends for the port's address
// tells its MAC too.
func (a *Agent) Resolve(ctx context.Context) (net.HardwareAddr, error) {
	gw := a.port.Gateway
	if !gw.IsValid() {
		return nil, errors.New("nexthop: the port has no gateway to resolve")
	}
	ch := make(chan net.HardwareAddr, 1)
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil, net.ErrClosed
	}
	a.want, a.got = gw, ch
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.want, a.got = netip.Addr{}, nil
		a.mu.Unlock()
	}()
	deadline := time.NewTimer(a.timeout)
	defer deadline.Stop()
	tick := time.NewTicker(retryEvery)
	defer tick.Stop()
	for {
		if err := a.ask(gw); err != nil {
			return nil, fmt.Errorf("port %s: asking for gateway %s: %w", a.iface, gw, err)
		}
		select {
		case mac := <-ch:
			return mac, nil
		case <-ctx.Done():
			return nil, fmt.Errorf("port %s: stopped while asking for gateway %s (%s): %w", a.iface, gw, a.port.Proto(), ctx.Err())
		case <-deadline.C:
			return nil, &NoAnswerError{Interface: a.iface, Port: a.port, Timeout: a.timeout, Tags: a.tags}
		case <-a.done:
			return nil, fmt.Errorf("port %s: %w", a.iface, a.loopErr())
		case <-tick.C:
		}
	}
}

// ask sends one request for gw.
func (a *Agent) ask(gw netip.Addr) error {
	var b []byte
	var err error
	if a.port.Is4() {
		b, err = arpFrame(a.tags, 1, a.mac, a.port.Addr.Addr(), nil, gw)
	} else {
		b, err = solicit(a.tags, a.mac, a.port.Addr.Addr(), gw)
	}
	if err != nil {
		return err
	}
	return a.send(b)
}

// serve reads the link until Close: it answers requests for the port's
// address and hands an answer from the gateway to a waiting Resolve.
func (a *Agent) serve() {
	defer close(a.done)
	buf := make([]byte, 2048)
	addr := a.port.Addr.Addr()
	for {
		n, err := a.conn.read(buf)
		if err != nil {
			a.mu.Lock()
			if !a.closed {
				a.err = err
			}
			a.mu.Unlock()
			return
		}
		m, ok := parse(buf[:n])
		if !ok || m.From.String() == a.mac.String() {
			continue // not a neighbour message, or the port's own
		}
		if m.Sender.Is4() != addr.Is4() && m.Target.Is4() != addr.Is4() {
			continue
		}
		a.mu.Lock()
		if a.got != nil && m.Sender == a.want && len(m.MAC) == 6 && (m.kind == kindReply || m.kind == kindRequest) {
			select {
			case a.got <- append(net.HardwareAddr(nil), m.MAC...):
			default:
			}
		}
		a.mu.Unlock()
		if m.kind == kindRequest && m.Target == addr && !a.kernel {
			var b []byte
			if addr.Is4() {
				if !m.Sender.Is4() || len(m.MAC) != 6 {
					continue
				}
				b, err = arpFrame(a.tags, 2, a.mac, addr, m.MAC, m.Sender)
			} else {
				b, err = advertise(a.tags, a.mac, addr, m)
			}
			if err == nil && a.send(b) == nil {
				a.answered.Add(1)
			}
		}
	}
}

// send writes one frame on the link.
func (a *Agent) send(b []byte) error {
	return a.conn.write(b)
}

func (a *Agent) loopErr() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return a.err
	}
	return net.ErrClosed
}

// Close stops answering and closes the socket; it is idempotent.
func (a *Agent) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	a.mu.Unlock()
	err := a.conn.Close()
	<-a.done
	return err
}
