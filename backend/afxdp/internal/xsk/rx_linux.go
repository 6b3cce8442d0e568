//go:build linux

package xsk

import (
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// WaitReadable waits up to timeout for received frames (poll POLLIN).
func (s *Socket) WaitReadable(timeout time.Duration) error {
	return s.wait(unix.POLLIN, timeout)
}

// FillFree returns how many addresses the fill ring can take now.
func (s *Socket) FillFree() int { return s.fill.free(int(s.fill.size)) }

// Fill gives the kernel the UMEM chunks at addrs to receive into (at most
// FillFree of them) and publishes them.
func (s *Socket) Fill(addrs []uint64) {
	r := &s.fill
	for i, a := range addrs {
		s.fillAddr[(r.local+uint32(i))&r.mask] = a
	}
	r.local += uint32(len(addrs))
	atomic.StoreUint32(r.prod, r.local)
}

// FillNeedsWakeup reports whether the driver asks for a wake-up to use the
// fill ring (need_wakeup; copy mode never does).
func (s *Socket) FillNeedsWakeup() bool {
	return s.wakeup && atomic.LoadUint32(s.fill.flags)&unix.XDP_RING_NEED_WAKEUP != 0
}

// WakeRx wakes the driver for the fill ring (recvfrom MSG_DONTWAIT).
func (s *Socket) WakeRx() {
	s.kicks++
	_, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(s.fdi), 0, 0, unix.MSG_DONTWAIT, 0, 0)
	if e != 0 {
		s.kickAgain++
	}
}

// Receive takes up to len(addrs) received frames off the RX ring: UMEM
// address and length of each. The chunks are the caller's until it gives
// them back with Fill.
func (s *Socket) Receive(addrs []uint64, lens []int) int {
	r := &s.rx
	n := min(r.avail(), len(addrs), len(lens))
	for i := range n {
		d := &s.rxDesc[(r.local+uint32(i))&r.mask]
		addrs[i], lens[i] = d.Addr, int(d.Len)
	}
	r.consumed(n)
	return n
}

// Poller waits on several sockets at once (a receiver with one socket per
// queue).
type Poller struct {
	fds []unix.PollFd
}

// NewPoller returns a poller over socks.
func NewPoller(socks []*Socket) *Poller {
	p := &Poller{fds: make([]unix.PollFd, len(socks))}
	for i, s := range socks {
		p.fds[i] = unix.PollFd{Fd: int32(s.fdi), Events: unix.POLLIN}
	}
	return p
}

// WaitReadable waits up to timeout for any socket to have frames.
func (p *Poller) WaitReadable(timeout time.Duration) error {
	for i := range p.fds {
		p.fds[i].Revents = 0
	}
	ms := int(timeout.Milliseconds())
	if timeout > 0 && ms == 0 {
		ms = 1
	}
	if _, err := unix.Poll(p.fds, ms); err != nil && err != unix.EINTR {
		return os.NewSyscallError("poll", err)
	}
	for _, f := range p.fds {
		if f.Revents&(unix.POLLERR|unix.POLLNVAL) != 0 {
			serr, err := unix.GetsockoptInt(int(f.Fd), unix.SOL_SOCKET, unix.SO_ERROR)
			if err == nil && serr != 0 {
				return os.NewSyscallError("poll", unix.Errno(serr))
			}
		}
	}
	return nil
}
