//go:build linux

package cma

import "github.com/wpg-dev/wpg/internal/sys"

// hugeSize is the size of a transparent huge page on x86-64 and arm64
// with 4 KiB base pages (a PMD); buffers of hugeMin bytes or more are put
// on them (a smaller one would take a whole huge page of memory).
const (
	hugeSize = 2 << 20
	hugeMin  = 128 << 10
)

// buffer is memory the kernel copies from or into (the sender's staging
// slots, the receiver's buffers), on transparent huge pages where the
// system gives them.
//
// Why: process_vm_readv pins the pages of both sides and copies page by
// page; on 2 MiB pages the same copy runs far faster (the C reference
// `cma -m readv` on this project's test VM: 29–34 GB/s with -H, its huge
// page option, against 16–22 without at 460,800 B, 17–24 against 11–16 at
// 1 MiB), and wpg's verified receiver needs the headroom for its CRC-32C.
type buffer struct {
	m *sys.Mapping
	b []byte
}

// allocBuffer maps size bytes for what and writes every page once so that
// no copy faults it in; from hugeMin bytes on 2 MiB aligned and advised
// for transparent huge pages (MADV_HUGEPAGE, which the "madvise" policy
// honours; under "never", or when the kernel has no huge page free, it
// stays on 4 KiB pages). A refusal is sys.Alloc's error.
func allocBuffer(size int, what string) (*buffer, error) {
	if size < hugeMin {
		m, err := sys.Alloc(size, what)
		if err != nil {
			return nil, err
		}
		return &buffer{m: m, b: m.Bytes()}, nil
	}
	span := (size + hugeSize - 1) &^ (hugeSize - 1)
	m, err := sys.MapAnonLazy(span+hugeSize, false)
	if err != nil {
		if m, err = sys.Alloc(size, what); err != nil {
			return nil, err
		}
		return &buffer{m: m, b: m.Bytes()}, nil
	}
	all := m.Bytes()
	off := int((hugeSize - sys.AddrOf(all)%hugeSize) % hugeSize)
	_ = sys.AdviseHugepage(all[off : off+span]) // a hint
	b := all[off : off+size : off+size]
	sys.TouchWrite(b)
	return &buffer{m: m, b: b}, nil
}

// Bytes returns the buffer (nil after Close).
func (x *buffer) Bytes() []byte {
	if x == nil || x.m == nil {
		return nil
	}
	return x.b
}

// Close unmaps the buffer; it is idempotent and nil-safe.
func (x *buffer) Close() error {
	if x == nil || x.m == nil {
		return nil
	}
	err := x.m.Close()
	x.m, x.b = nil, nil
	return err
}
