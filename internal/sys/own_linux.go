//go:build linux

package sys

import (
	"errors"
	"fmt"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// FD is a file descriptor with one owner: Close closes it once (later
// calls do nothing). The zero value holds no descriptor; use OwnFD.
type FD struct {
	fd int // -1 when closed; 0 in the zero value is never owned
	ok bool
}

// OwnFD takes ownership of fd.
func OwnFD(fd int) FD { return FD{fd: fd, ok: fd >= 0} }

// Int returns the descriptor number (-1 once closed or when empty). It
// stays owned by f.
func (f *FD) Int() int {
	if !f.ok {
		return -1
	}
	return f.fd
}

// Valid reports whether f holds an open descriptor.
func (f *FD) Valid() bool { return f.ok }

// Close closes the descriptor; it is idempotent.
func (f *FD) Close() error {
	if !f.ok {
		return nil
	}
	f.ok = false
	fd := f.fd
	f.fd = -1
	if err := unix.Close(fd); err != nil {
		return os.NewSyscallError("close", err)
	}
	return nil
}

// Mapping is a memory mapping with one owner. Close unmaps it and is
// idempotent; Bytes is valid until Close.
type Mapping struct {
	b    []byte
	full []byte // the whole mapping when b is the start of it (AllocHuge)
	name string // what is mapped, for errors
}

// MapFile maps size bytes of fd from offset 0, shared (MAP_SHARED),
// read-only or read-write. populate faults every page in now
// (MAP_POPULATE). what names the mapping in errors.
func MapFile(fd, size int, writable, populate bool, what string) (*Mapping, error) {
	prot := unix.PROT_READ
	if writable {
		prot |= unix.PROT_WRITE
	}
	flags := unix.MAP_SHARED
	if populate {
		flags |= unix.MAP_POPULATE
	}
	b, err := unix.Mmap(fd, 0, size, prot, flags)
	if err != nil {
		return nil, fmt.Errorf("mmap %s (%d bytes): %w", what, size, os.NewSyscallError("mmap", err))
	}
	return &Mapping{b: b, name: what}, nil
}

// MapAnonLazy maps size bytes of fresh private anonymous memory, not yet
// touched (the first access faults each page in). With hugepage it asks
// for transparent huge pages (MADV_HUGEPAGE), which the "madvise" THP
// policy honours.
func MapAnonLazy(size int, hugepage bool) (*Mapping, error) {
	if size <= 0 {
		return nil, fmt.Errorf("map anonymous memory: size %d must be positive", size)
	}
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes of anonymous memory: %w (free memory or raise the mapping limit)", size, err)
	}
	if hugepage {
		_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // a hint; refusals leave 4 KiB pages
	}
	return &Mapping{b: b, name: "anonymous memory"}, nil
}

// Bytes returns the mapped memory (nil after Close).
func (m *Mapping) Bytes() []byte {
	if m == nil {
		return nil
	}
	return m.b
}

// Addr returns the start address of the mapping (to tell a peer process
// where to read with process_vm_readv); 0 when empty.
func (m *Mapping) Addr() uintptr {
	if len(m.b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&m.b[0]))
}

// Lock locks the mapping into memory (mlock), charged to RLIMIT_MEMLOCK
// unless the process has CAP_IPC_LOCK; a refusal for the limit wraps
// ErrMemlock and names the limit.
func (m *Mapping) Lock() error {
	if err := unix.Mlock(m.b); err != nil {
		if errors.Is(err, unix.ENOMEM) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EAGAIN) {
			lim, _ := MemlockLimit()
			return fmt.Errorf("mlock %d-byte %s: %w (limit %s): %w", len(m.b), m.name, ErrMemlock, limitString(lim), err)
		}
		return fmt.Errorf("mlock %d-byte %s: %w", len(m.b), m.name, os.NewSyscallError("mlock", err))
	}
	return nil
}

// Close unmaps the memory; calling it again does nothing.
func (m *Mapping) Close() error {
	if m == nil || m.b == nil {
		return nil
	}
	b, full := m.b, m.full
	m.b, m.full = nil, nil
	if full != nil {
		// AllocHuge's span, mapped with the pointer calls.
		if err := unix.MunmapPtr(unsafe.Pointer(&full[0]), uintptr(len(full))); err != nil {
			return fmt.Errorf("munmap %s (%d bytes): %w", m.name, len(full), os.NewSyscallError("munmap", err))
		}
		return nil
	}
	if err := unix.Munmap(b); err != nil {
		return fmt.Errorf("munmap %s (%d bytes): %w", m.name, len(b), os.NewSyscallError("munmap", err))
	}
	return nil
}

// ErrMemlock is wrapped by errors when locking memory exceeds
// RLIMIT_MEMLOCK (ulimit -l) without CAP_IPC_LOCK.
var ErrMemlock = errors.New("memlock limit (RLIMIT_MEMLOCK) too small")

func limitString(v uint64) string {
	if v == unix.RLIM_INFINITY {
		return "unlimited"
	}
	return fmt.Sprintf("%d bytes", v)
}

// IsNoMemory reports whether err is the kernel refusing an allocation
// (ENOMEM) other than the memlock limit (ErrMemlock).
func IsNoMemory(err error) bool {
	return errors.Is(err, unix.ENOMEM) && !errors.Is(err, ErrMemlock)
}

// RealtimeOffsetNs returns CLOCK_REALTIME minus CLOCK_MONOTONIC in
// nanoseconds (subtract it from a realtime stamp to get a monotonic one).
func RealtimeOffsetNs() int64 {
	// Both clocks through the vDSO (tens of ns; unix.ClockGettime is a
	// real system call, microseconds here), the realtime read bracketed by
	// two monotonic reads so the offset is exact to their midpoint. The
	// tightest of three tries wins (a preemption widens one bracket).
	best, width := int64(0), int64(1<<62)
	for range 3 {
		m1 := nanotime()
		rt := time.Now().UnixNano()
		m2 := nanotime()
		if w := m2 - m1; w < width {
			best, width = rt-(m1+m2)/2, w
		}
	}
	return best
}
