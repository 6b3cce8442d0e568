//go:build linux

package sys

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Primitives for DMA buffers (package dmabuf): sealed memfds, ioctls whose
// argument is a struct the caller encodes, and opening a device node with
// or without O_SYNC. The protocols (UDMABUF_CREATE, DMA_BUF_IOCTL_SYNC,
// the u-dma-buf ioctls and sysfs) live in package dmabuf.

// Memfd seals (fcntl F_ADD_SEALS).
const (
	SealSeal        = unix.F_SEAL_SEAL
	SealShrink      = unix.F_SEAL_SHRINK
	SealGrow        = unix.F_SEAL_GROW
	SealWrite       = unix.F_SEAL_WRITE
	SealFutureWrite = unix.F_SEAL_FUTURE_WRITE
)

// MemfdSealed creates a memory file of size bytes that accepts seals
// (memfd_create with MFD_CLOEXEC|MFD_ALLOW_SEALING), sizes it and adds
// seals (0: none). It returns the descriptor.
func MemfdSealed(name string, size int64, seals int) (int, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return -1, fmt.Errorf("memfd_create(%s, MFD_ALLOW_SEALING): %w", name, os.NewSyscallError("memfd_create", err))
	}
	if err := unix.Ftruncate(fd, size); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("ftruncate memfd %s to %d bytes: %w", name, size, os.NewSyscallError("ftruncate", err))
	}
	if seals != 0 {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("seal memfd %s (F_ADD_SEALS %#x): %w", name, seals, os.NewSyscallError("fcntl", err))
		}
	}
	return fd, nil
}

// Seals returns the seals of a memfd (F_GET_SEALS).
func Seals(fd int) (int, error) {
	s, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil {
		return 0, os.NewSyscallError("fcntl F_GET_SEALS", err)
	}
	return s, nil
}

// IoctlBytes issues ioctl(fd, req, arg) with arg pointing at the struct
// the caller encoded into b (nil: a null argument), and returns the
// ioctl's return value (UDMABUF_CREATE returns a new descriptor). The
// error unwraps to the errno. It does not allocate.
func IoctlBytes(fd int, req uint, b []byte) (int, error) {
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(p))
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

// OpenDevice opens path read-write and close-on-exec; osync adds O_SYNC,
// which drivers such as u-dma-buf read as "map uncached". The error is an
// *os.PathError (errors.Is matches fs.ErrNotExist, fs.ErrPermission).
func OpenDevice(path string, osync bool) (int, error) {
	flags := unix.O_RDWR | unix.O_CLOEXEC
	if osync {
		flags |= unix.O_SYNC
	}
	for {
		fd, err := unix.Open(path, flags, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

// SeekEnd returns the size of the object behind fd by seeking to its end
// (a dma-buf has no st_size) and back to the start.
func SeekEnd(fd int) (int64, error) {
	n, err := unix.Seek(fd, 0, 2)
	if err != nil {
		return 0, os.NewSyscallError("lseek", err)
	}
	_, _ = unix.Seek(fd, 0, 0)
	return n, nil
}

// CharDevice returns the major and minor numbers of the character device
// behind fd, and false when fd is not one (a regular file standing in for
// a device in tests).
func CharDevice(fd int) (major, minor uint32, ok bool) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return 0, 0, false
	}
	return unix.Major(st.Rdev), unix.Minor(st.Rdev), true
}

// Mount mounts a file system (mount(2)); for the guest init of the kernel
// test bed (internal/testbed/vm).
func Mount(source, target, fstype string, flags uintptr, data string) error {
	if err := unix.Mount(source, target, fstype, flags, data); err != nil {
		return fmt.Errorf("mount %s on %s: %w", fstype, target, os.NewSyscallError("mount", err))
	}
	return nil
}

// LoadModule loads the kernel module in the open file fd (finit_module);
// compressed tells the kernel to decompress it (.ko.xz, .ko.zst;
// CONFIG_MODULE_DECOMPRESS).
func LoadModule(fd int, params string, compressed bool) error {
	flags := 0
	if compressed {
		flags |= unix.MODULE_INIT_COMPRESSED_FILE
	}
	if err := unix.FinitModule(fd, params, flags); err != nil {
		return os.NewSyscallError("finit_module", err)
	}
	return nil
}

// PowerOff syncs and powers the machine off (reboot(2)); for the guest
// init of the kernel test bed. It returns only on failure.
func PowerOff() error {
	unix.Sync()
	return os.NewSyscallError("reboot", unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF))
}
