//go:build linux

package sys

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Alloc maps size bytes of private anonymous memory for what, faulted in
// and written once (MapAnon); Close releases it. When the system refuses
// (ENOMEM: over ulimit -v, or out of memory) the error is an *AllocError
// naming size and what, instead of the runtime's fatal "out of memory" a
// make of the same size ends in.
func Alloc(size int, what string) (*SharedMapping, error) {
	if size <= 0 {
		return nil, &AllocError{Bytes: int64(size), What: what, Err: unix.EINVAL}
	}
	m, err := MapAnon(size)
	if err != nil {
		var errno unix.Errno
		if !errors.As(err, &errno) {
			errno = unix.ENOMEM
		}
		return nil, &AllocError{Bytes: int64(size), What: what, Err: errno}
	}
	return m, nil
}

// HugePageSize is the size of a transparent huge page on x86-64 and arm64
// with 4 KiB base pages (a PMD).
const HugePageSize = 2 << 20

// HugeMin is the smallest buffer AllocHuge puts on huge pages: a smaller
// one would take a whole huge page of memory.
const HugeMin = 128 << 10

// AllocHuge is Alloc for memory the kernel copies from or into in bulk
// (process_vm_readv, socket and pipe reads and writes): from HugeMin bytes
// on it starts on a 2 MiB boundary and is advised for transparent huge
// pages (MADV_HUGEPAGE, which the "madvise" policy honours) before its
// first write, so that the copies take one TLB entry and one page
// reference per 2 MiB instead of 512. Under the "never" policy, or when
// the kernel has no huge page free, it stays on 4 KiB pages. Every page is
// written once, as Alloc's are; the errors are Alloc's.
func AllocHuge(size int, what string) (*Mapping, error) {
	if size < HugeMin {
		return Alloc(size, what)
	}
	span := (size + HugePageSize - 1) &^ (HugePageSize - 1)
	// Mapped with the pointer calls, not unix.Mmap, whose bookkeeping
	// refuses to unmap part of a mapping: the unaligned head and tail go
	// at once, so that Close unmaps exactly the span that is left.
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(span+HugePageSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return Alloc(size, what) // the same refusal, with Alloc's error
	}
	all := unsafe.Slice((*byte)(p), span+HugePageSize)
	off := int((HugePageSize - uintptr(p)%HugePageSize) % HugePageSize)
	if off > 0 {
		_ = unix.MunmapPtr(p, uintptr(off))
	}
	if tail := HugePageSize - off; tail > 0 {
		_ = unix.MunmapPtr(unsafe.Pointer(&all[off+span]), uintptr(tail))
	}
	full := all[off : off+span : off+span]
	_ = AdviseHugepage(full) // a hint
	b := full[:size:size]
	TouchWrite(b)
	return &Mapping{b: b, full: full, name: what}, nil
}
