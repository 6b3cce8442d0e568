//go:build linux

package sys

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// MemfdCreate creates an anonymous memory file of size bytes (memfd_create
// with MFD_CLOEXEC) and returns its descriptor.
func MemfdCreate(name string, size int64) (int, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("memfd_create(%s): %w", name, err)
	}
	if err := unix.Ftruncate(fd, size); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("ftruncate memfd %s to %d bytes: %w", name, size, err)
	}
	return fd, nil
}

// FdSize returns the size of the file behind fd.
func FdSize(fd int) (int64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, fmt.Errorf("fstat: %w", err)
	}
	return st.Size, nil
}

// SharedMapping is the Mapping that MapShared, MapAnon and Alloc return.
type SharedMapping = Mapping

// MapShared maps size bytes of fd shared and read-write. populate
// pre-faults the pages (MAP_POPULATE).
func MapShared(fd int, size int, populate bool) (*SharedMapping, error) {
	flags := unix.MAP_SHARED
	if populate {
		flags |= unix.MAP_POPULATE
	}
	b, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, flags)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes shared: %w", size, err)
	}
	return &Mapping{b: b, name: "shared mapping"}, nil
}

// AdviseHugepage asks for transparent huge pages on b (MADV_HUGEPAGE); the
// kernel may ignore it.
func AdviseHugepage(b []byte) error { return unix.Madvise(b, unix.MADV_HUGEPAGE) }

// Uint64At returns the 8-byte-aligned word at b[off:] as an atomic value,
// for indices shared with another process through a mapping.
func Uint64At(b []byte, off int) *atomic.Uint64 {
	_ = b[off+7]
	p := unsafe.Pointer(&b[off])
	if uintptr(p)%8 != 0 {
		panic("sys.Uint64At: unaligned offset")
	}
	return (*atomic.Uint64)(p)
}

// Uint32At returns the 4-byte-aligned word at b[off:] as an atomic value.
func Uint32At(b []byte, off int) *atomic.Uint32 {
	_ = b[off+3]
	p := unsafe.Pointer(&b[off])
	if uintptr(p)%4 != 0 {
		panic("sys.Uint32At: unaligned offset")
	}
	return (*atomic.Uint32)(p)
}

// AddrOf returns the address of b[0] (for process_vm_* and xpmem, which
// name memory by address); b must be non-empty and must not move (mmap'd
// or heap memory that stays referenced).
func AddrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }

// DupFd duplicates fd (close-on-exec).
func DupFd(fd int) (int, error) {
	n, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("dup fd %d: %w", fd, err)
	}
	return n, nil
}

// MapAnon maps size bytes of private anonymous memory (for staging buffers
// that must not move and that the kernel may reference after a call
// returns, as with vmsplice, or that a peer reads with process_vm_readv).
// The pages are faulted in now (MAP_POPULATE), so that a timed run does
// not pay for first touches. Close unmaps it.
func MapAnon(size int) (*SharedMapping, error) {
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes anonymous: %w", size, err)
	}
	TouchWrite(b)
	return &Mapping{b: b, name: "anonymous memory"}, nil
}
