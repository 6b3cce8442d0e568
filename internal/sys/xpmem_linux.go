//go:build linux

package sys

// XPMEM (hpc/xpmem, Cray-HPE/xpmem, openucx/xpmem; identical user ABI):
// ioctls on /dev/xpmem, as in the hpc/xpmem kernel module's headers. Every
// command is encoded with _IO('x', n) (no direction, no size) even though
// most take a struct pointer; the structs below match the x86_64 layouts
// measured from the C headers (see xpmem_linux_test.go).

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// XPMEMDevice is the misc device the xpmem module creates.
const XPMEMDevice = "/dev/xpmem"

// ioctl request numbers: _IO('x', n).
const (
	xpmemIoctlVersion   = 0x7800
	xpmemIoctlMake      = 0x7801
	xpmemIoctlRemove    = 0x7802
	xpmemIoctlGet       = 0x7803
	xpmemIoctlRelease   = 0x7804
	xpmemIoctlAttach    = 0x7805
	xpmemIoctlDetach    = 0x7806
	xpmemIoctlForkBegin = 0x7807
	xpmemIoctlForkEnd   = 0x7808
)

// xpmemIO builds an _IO(type, nr) request: direction none, size 0.
func xpmemIO(typ byte, nr uint) uint { return uint(typ)<<8 | nr }

// Flags and permit types of the xpmem API.
const (
	xpmemRDONLY      = 0x1
	xpmemRDWR        = 0x2
	xpmemPermitMode  = 0x1
	xpmemErrnoNoProc = unix.Errno(2004) // the tgid never opened /dev/xpmem
)

// XPMEMMaxAddrSize as a MAKE size exports everything from vaddr up to the
// end of the caller's address space.
const XPMEMMaxAddrSize = ^uint64(0)

type xpmemCmdMake struct {
	Vaddr       uint64
	Size        uint64
	PermitType  int32
	_           int32 // padding at offset 20, kept zero
	PermitValue uint64
	Segid       int64
}

type xpmemCmdGet struct {
	Segid       int64
	Flags       int32
	PermitType  int32
	PermitValue uint64
	Apid        int64
}

type xpmemCmdAttach struct {
	Apid   int64
	Offset int64
	Size   uint64
	Vaddr  uint64
	Fd     int32
	Flags  int32
}

type xpmemCmdRemove struct{ Segid int64 }
type xpmemCmdRelease struct{ Apid int64 }
type xpmemCmdDetach struct{ Vaddr uint64 }

// ErrXPMEMNotLoaded is wrapped when /dev/xpmem does not exist.
var ErrXPMEMNotLoaded = errors.New("xpmem module not loaded (" + XPMEMDevice + " missing)")

// XPMEMSegid names an exported address range (> 0 when valid).
type XPMEMSegid int64

// XPMEMApid is a permission to attach a segment (> 0 when valid).
type XPMEMApid int64

// XPMEM is an open /dev/xpmem. One per process is enough; all methods are
// safe for concurrent use.
type XPMEM struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// XPMEMAvailable reports whether the xpmem device exists.
func XPMEMAvailable() error { return xpmemStat(XPMEMDevice) }

func xpmemStat(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %w", ErrXPMEMNotLoaded, err)
		}
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Mode()&fs.ModeCharDevice == 0 {
		return fmt.Errorf("%s is not a character device (mode %v): the xpmem module is not what created it", path, st.Mode())
	}
	return nil
}

// OpenXPMEM opens /dev/xpmem read-write, close-on-exec.
func OpenXPMEM() (*XPMEM, error) { return openXPMEM(XPMEMDevice) }

func openXPMEM(path string) (*XPMEM, error) {
	if err := xpmemStat(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w (the udev rule of the module makes it mode 0666)", path, err)
	}
	return &XPMEM{f: f, path: path}, nil
}

// ioctl issues one xpmem command; like libxpmem it reopens the device and
// retries once when the kernel says this process never opened it (errno
// 2004, an fd inherited across fork).
func (x *XPMEM) ioctl(cmd uint, arg unsafe.Pointer) (uintptr, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.f == nil {
		return 0, fmt.Errorf("%s: %w", x.path, os.ErrClosed)
	}
	for attempt := 0; ; attempt++ {
		r, _, e := unix.Syscall(unix.SYS_IOCTL, x.f.Fd(), uintptr(cmd), uintptr(arg))
		if e == 0 {
			return r, nil
		}
		if e == xpmemErrnoNoProc && attempt == 0 {
			f, err := os.OpenFile(x.path, os.O_RDWR|unix.O_CLOEXEC, 0)
			if err != nil {
				return 0, fmt.Errorf("reopen %s: %w", x.path, err)
			}
			_ = x.f.Close()
			x.f = f
			continue
		}
		return 0, e
	}
}

// Version returns the module's version (major = v>>16, minor = v&0xffff).
func (x *XPMEM) Version() (int, error) {
	r, err := x.ioctl(xpmemIoctlVersion, nil)
	if err != nil {
		return 0, fmt.Errorf("xpmem VERSION ioctl on %s: %w", x.path, err)
	}
	return int(r), nil
}

// Make exports [addr, addr+size) of this process with the Unix permission
// mode (e.g. 0o600). addr and size must be page aligned.
func (x *XPMEM) Make(addr uintptr, size uint64, mode uint32) (XPMEMSegid, error) {
	pg := uint64(os.Getpagesize())
	if uint64(addr)%pg != 0 || (size%pg != 0 && size != XPMEMMaxAddrSize) || size == 0 {
		return 0, fmt.Errorf("xpmem make %#x+%d: address and size must be page aligned (%d) and size non-zero: %w", addr, size, pg, unix.EINVAL)
	}
	if mode&^0o777 != 0 {
		return 0, fmt.Errorf("xpmem make: permission mode %#o has bits outside 0777: %w", mode, unix.EINVAL)
	}
	c := xpmemCmdMake{Vaddr: uint64(addr), Size: size, PermitType: xpmemPermitMode, PermitValue: uint64(mode)}
	if _, err := x.ioctl(xpmemIoctlMake, unsafe.Pointer(&c)); err != nil {
		return 0, fmt.Errorf("xpmem make %#x+%d: %w", addr, size, err)
	}
	if c.Segid <= 0 {
		return 0, fmt.Errorf("xpmem make %#x+%d: kernel returned segid %d", addr, size, c.Segid)
	}
	return XPMEMSegid(c.Segid), nil
}

// Remove withdraws a segment; every attachment to it is torn down.
func (x *XPMEM) Remove(s XPMEMSegid) error {
	c := xpmemCmdRemove{Segid: int64(s)}
	if _, err := x.ioctl(xpmemIoctlRemove, unsafe.Pointer(&c)); err != nil {
		return fmt.Errorf("xpmem remove segid %#x: %w", int64(s), err)
	}
	return nil
}

// Get asks for permission to attach segment s. Attaching always needs
// read-write permission (an RDONLY apid fails attach with EACCES), so Get
// asks for RDWR unless readOnly is set.
func (x *XPMEM) Get(s XPMEMSegid, readOnly bool) (XPMEMApid, error) {
	if s <= 0 {
		return 0, fmt.Errorf("xpmem get: invalid segid %d: %w", int64(s), unix.EINVAL)
	}
	c := xpmemCmdGet{Segid: int64(s), Flags: xpmemRDWR, PermitType: xpmemPermitMode}
	if readOnly {
		c.Flags = xpmemRDONLY
	}
	if _, err := x.ioctl(xpmemIoctlGet, unsafe.Pointer(&c)); err != nil {
		if errors.Is(err, unix.EACCES) {
			return 0, fmt.Errorf("xpmem get segid %#x: %w (the exporter's permission mode does not allow this uid/gid read-write access)", int64(s), err)
		}
		return 0, fmt.Errorf("xpmem get segid %#x: %w", int64(s), err)
	}
	if c.Apid <= 0 {
		return 0, fmt.Errorf("xpmem get segid %#x: kernel returned apid %d", int64(s), c.Apid)
	}
	return XPMEMApid(c.Apid), nil
}

// Release drops an apid.
func (x *XPMEM) Release(a XPMEMApid) error {
	c := xpmemCmdRelease{Apid: int64(a)}
	if _, err := x.ioctl(xpmemIoctlRelease, unsafe.Pointer(&c)); err != nil {
		return fmt.Errorf("xpmem release apid %#x: %w", int64(a), err)
	}
	return nil
}

// XPMEMAttachment is another process's memory mapped into this one. Never
// unmap it yourself (the module kills a process that munmaps an
// attachment): Detach it.
type XPMEMAttachment struct {
	x *XPMEM
	b []byte
}

// Attach maps size bytes at offset (page aligned) of the segment behind
// apid into this process, at an address the kernel chooses.
func (x *XPMEM) Attach(a XPMEMApid, offset int64, size int) (*XPMEMAttachment, error) {
	pg := int64(os.Getpagesize())
	if offset%pg != 0 || offset < 0 || size <= 0 {
		return nil, fmt.Errorf("xpmem attach apid %#x offset %d size %d: offset must be page aligned and size positive: %w", int64(a), offset, size, unix.EINVAL)
	}
	c := xpmemCmdAttach{Apid: int64(a), Offset: offset, Size: uint64(size), Fd: int32(x.f.Fd())}
	if _, err := x.ioctl(xpmemIoctlAttach, unsafe.Pointer(&c)); err != nil {
		return nil, fmt.Errorf("xpmem attach apid %#x (%d bytes at offset %d): %w", int64(a), size, offset, err)
	}
	if c.Vaddr == 0 {
		return nil, fmt.Errorf("xpmem attach apid %#x: kernel returned address 0", int64(a))
	}
	// The kernel wrote the mapping's address into Vaddr; read that field
	// as a pointer rather than converting an integer (keeps go vet quiet
	// about a legitimate kernel-provided address).
	p := *(*unsafe.Pointer)(unsafe.Pointer(&c.Vaddr))
	b := unsafe.Slice((*byte)(p), size)
	return &XPMEMAttachment{x: x, b: b}, nil
}

// Bytes returns the attached memory, valid until Detach.
func (t *XPMEMAttachment) Bytes() []byte { return t.b }

// Detach unmaps the attachment; calling it again does nothing.
func (t *XPMEMAttachment) Detach() error {
	if t == nil || t.b == nil {
		return nil
	}
	c := xpmemCmdDetach{Vaddr: uint64(uintptr(unsafe.Pointer(&t.b[0])))}
	t.b = nil
	if _, err := t.x.ioctl(xpmemIoctlDetach, unsafe.Pointer(&c)); err != nil {
		return fmt.Errorf("xpmem detach %#x: %w", c.Vaddr, err)
	}
	return nil
}

// Close closes the device; the kernel then releases and removes whatever
// this process still held. It is idempotent.
func (x *XPMEM) Close() error {
	if x == nil {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.f == nil {
		return nil
	}
	err := x.f.Close()
	x.f = nil
	return err
}
