//go:build linux

package xsk

import (
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// TxFree returns how many TX descriptors can be written now (reading the
// kernel's consumer index only when the cached one says fewer than want).
func (s *Socket) TxFree(want int) int { return s.tx.free(want) }

// TxPut writes descriptor i of the next batch (not yet published): the
// frame of length n at UMEM address addr.
func (s *Socket) TxPut(i int, addr uint64, n int) {
	d := &s.txDesc[(s.tx.local+uint32(i))&s.tx.mask]
	d.Addr, d.Len, d.Options = addr, uint32(n), 0
}

// TxPublish makes the first n descriptors written with TxPut visible to
// the kernel (one store-release of the producer index).
func (s *Socket) TxPublish(n int) {
	s.tx.local += uint32(n)
	atomic.StoreUint32(s.tx.prod, s.tx.local)
}

// TxPending returns the descriptors published but not yet taken by the
// kernel.
func (s *Socket) TxPending() int {
	return int(s.tx.local - atomic.LoadUint32(s.tx.cons))
}

// NeedsKick reports whether the kernel wants a kick to send (always, for
// a socket bound without need_wakeup).
func (s *Socket) NeedsKick() bool {
	return !s.wakeup || atomic.LoadUint32(s.tx.flags)&unix.XDP_RING_NEED_WAKEUP != 0
}

// Kick asks the kernel to send what is on the TX ring: sendto with
// MSG_DONTWAIT, as a raw system call (it never sleeps; the runtime does not
// hand the thread's P away meanwhile). EAGAIN (budget reached, completion
// ring full), ENOBUFS and EBUSY (the device dropped a frame, which is still
// completed) are counted and not errors.
func (s *Socket) Kick() error {
	s.kicks++
	_, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(s.fdi), 0, 0, unix.MSG_DONTWAIT, 0, 0)
	switch e {
	case 0, unix.EINTR:
		return nil
	case unix.EAGAIN, unix.ENOBUFS, unix.EBUSY:
		s.kickAgain++
		return nil
	}
	return os.NewSyscallError("sendto", e)
}

// Complete moves up to len(addrs) completed UMEM addresses into addrs and
// returns how many.
func (s *Socket) Complete(addrs []uint64) int {
	r := &s.comp
	n := min(r.avail(), len(addrs))
	for i := range n {
		addrs[i] = s.compAddr[(r.local+uint32(i))&r.mask]
	}
	r.consumed(n)
	return n
}

// WaitWritable waits up to timeout for the kernel to free TX room
// (poll POLLOUT; in copy mode poll also drives the transmission).
func (s *Socket) WaitWritable(timeout time.Duration) error {
	return s.wait(unix.POLLOUT, timeout)
}
