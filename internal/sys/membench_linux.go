//go:build linux

package sys

// This file holds what `wpg membench` needs from the kernel: anonymous and
// memfd-backed mappings it owns (and frees between sizes), fd passing over a
// unix socket, process_vm_readv with partial transfers handled, an enlarged
// pipe, and the few facts of the system header. Identifiers carry a Bench
// prefix so they do not collide with the data-path backends' files in this
// package.

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BenchRegion is a memory mapping with one owner. Close unmaps it and is
// idempotent. Bytes is valid until Close.
type BenchRegion struct {
	b    []byte
	name string
}

// Bytes returns the mapped memory.
func (r *BenchRegion) Bytes() []byte { return r.b }

// Addr returns the start address of the mapping (to tell a peer process
// where to read with process_vm_readv).
func (r *BenchRegion) Addr() uintptr {
	if len(r.b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&r.b[0]))
}

// Close unmaps the region; calling it again does nothing.
func (r *BenchRegion) Close() error {
	if r == nil || r.b == nil {
		return nil
	}
	b := r.b
	r.b = nil
	if err := unix.Munmap(b); err != nil {
		return fmt.Errorf("munmap %s (%d bytes): %w", r.name, len(b), err)
	}
	return nil
}

// BenchMapAnon maps size bytes of fresh private anonymous memory, not yet
// touched (the first access faults each page in). With hugepage it asks for
// transparent huge pages (MADV_HUGEPAGE), which the "madvise" THP policy
// honours.
func BenchMapAnon(size int, hugepage bool) (*BenchRegion, error) {
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
	return &BenchRegion{b: b, name: "anonymous memory"}, nil
}

// BenchMemfd is a memfd (anonymous shared memory file) of a fixed size.
type BenchMemfd struct {
	f *os.File
}

// BenchMemfdCreate creates a memfd named name, sized to size bytes.
func BenchMemfdCreate(name string, size int) (*BenchMemfd, error) {
	if size <= 0 {
		return nil, fmt.Errorf("memfd %s: size %d must be positive", name, size)
	}
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd_create(%s): %w", name, err)
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("ftruncate memfd %s to %d bytes: %w", name, size, err)
	}
	return &BenchMemfd{f: os.NewFile(uintptr(fd), "memfd:"+name)}, nil
}

// BenchMemfdFromFile adopts a memfd received from another process.
func BenchMemfdFromFile(f *os.File) *BenchMemfd { return &BenchMemfd{f: f} }

// File returns the memfd's file (to pass to a peer).
func (m *BenchMemfd) File() *os.File { return m.f }

// Map maps size bytes of the memfd shared; writable or read-only. With
// populate the kernel faults every page in at map time (MAP_POPULATE).
func (m *BenchMemfd) Map(size int, writable, populate bool) (*BenchRegion, error) {
	prot := unix.PROT_READ
	if writable {
		prot |= unix.PROT_WRITE
	}
	flags := unix.MAP_SHARED
	if populate {
		flags |= unix.MAP_POPULATE
	}
	b, err := unix.Mmap(int(m.f.Fd()), 0, size, prot, flags)
	if err != nil {
		return nil, fmt.Errorf("mmap %s (%d bytes): %w", m.f.Name(), size, err)
	}
	return &BenchRegion{b: b, name: m.f.Name()}, nil
}

// Close closes the memfd; mappings stay valid until their own Close.
func (m *BenchMemfd) Close() error {
	if m == nil || m.f == nil {
		return nil
	}
	f := m.f
	m.f = nil
	return f.Close()
}

// BenchSocketpair returns a connected pair of SOCK_SEQPACKET unix sockets
// (message boundaries kept, fds passable), close-on-exec.
func BenchSocketpair() (*os.File, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair(AF_UNIX, SOCK_SEQPACKET): %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "membench-ctl-0"), os.NewFile(uintptr(fds[1]), "membench-ctl-1"), nil
}

// BenchSendMsg sends one message on a SOCK_SEQPACKET socket, with an
// optional file passed as SCM_RIGHTS.
func BenchSendMsg(sock *os.File, msg []byte, f *os.File) error {
	var oob []byte
	if f != nil {
		oob = unix.UnixRights(int(f.Fd()))
	}
	for {
		err := unix.Sendmsg(int(sock.Fd()), msg, oob, nil, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("sendmsg on %s: %w", sock.Name(), err)
		}
		return nil
	}
}

// BenchRecvMsg receives one message (at most len(buf) bytes) and a passed
// file if one came with it. It returns io.EOF-like os.ErrClosed wrapped
// when the peer closed its end (a zero-length read).
func BenchRecvMsg(sock *os.File, buf []byte) (int, *os.File, error) {
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, flags, _, err := unix.Recvmsg(int(sock.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, nil, fmt.Errorf("recvmsg on %s: %w", sock.Name(), err)
		}
		var f *os.File
		if oobn > 0 {
			cms, err := unix.ParseSocketControlMessage(oob[:oobn])
			if err != nil {
				return 0, nil, fmt.Errorf("recvmsg on %s: parse control message: %w", sock.Name(), err)
			}
			for _, cm := range cms {
				fds, err := unix.ParseUnixRights(&cm)
				if err != nil {
					continue
				}
				for i, fd := range fds {
					if i == 0 && f == nil {
						f = os.NewFile(uintptr(fd), "passed-fd")
					} else {
						_ = unix.Close(fd)
					}
				}
			}
		}
		if flags&unix.MSG_TRUNC != 0 {
			if f != nil {
				_ = f.Close()
			}
			return 0, nil, fmt.Errorf("recvmsg on %s: message longer than %d bytes", sock.Name(), len(buf))
		}
		if n == 0 && f == nil {
			return 0, nil, fmt.Errorf("recvmsg on %s: peer closed the socket: %w", sock.Name(), os.ErrClosed)
		}
		return n, f, nil
	}
}

// BenchReadv copies n bytes from address remote in process pid into dst
// with process_vm_readv, looping over partial transfers. It returns the
// number of system calls made.
func BenchReadv(pid int, dst []byte, remote uintptr) (calls int, err error) {
	done := 0
	for done < len(dst) {
		local := []unix.Iovec{{Base: &dst[done]}}
		local[0].SetLen(len(dst) - done)
		rem := []unix.RemoteIovec{{Base: remote + uintptr(done), Len: len(dst) - done}}
		k, err := unix.ProcessVMReadv(pid, local, rem, 0)
		calls++
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			if errors.Is(err, unix.EPERM) {
				return calls, fmt.Errorf("process_vm_readv from pid %d at %#x: %w (needs the same uid and a dumpable target, or CAP_SYS_PTRACE; check /proc/sys/kernel/yama/ptrace_scope)", pid, remote+uintptr(done), err)
			}
			return calls, fmt.Errorf("process_vm_readv from pid %d at %#x (%d bytes): %w", pid, remote+uintptr(done), len(dst)-done, err)
		}
		if k == 0 {
			return calls, fmt.Errorf("process_vm_readv from pid %d at %#x: no progress after %d of %d bytes", pid, remote, done, len(dst))
		}
		done += k
	}
	return calls, nil
}

// BenchAllowPtracer lets process pid read this process's memory where the
// Yama LSM restricts it (ptrace_scope 1: only ancestors may otherwise).
// Without Yama the call is refused and that refusal is ignored.
func BenchAllowPtracer(pid int) {
	_ = unix.Prctl(unix.PR_SET_PTRACER, uintptr(pid), 0, 0, 0)
}

// BenchPipe returns a pipe (read end, write end), close-on-exec, enlarged
// towards want bytes (F_SETPIPE_SZ). It returns the capacity obtained; when
// the kernel refuses want, it keeps the largest it accepts down to the
// default.
func BenchPipe(want int) (r, w *os.File, capacity int, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, 0, fmt.Errorf("pipe2: %w", err)
	}
	r, w = os.NewFile(uintptr(p[0]), "membench-pipe-r"), os.NewFile(uintptr(p[1]), "membench-pipe-w")
	for sz := want; sz >= 65536; sz /= 2 {
		if got, e := unix.FcntlInt(uintptr(p[1]), unix.F_SETPIPE_SZ, sz); e == nil {
			return r, w, got, nil
		}
	}
	got, e := unix.FcntlInt(uintptr(p[1]), unix.F_GETPIPE_SZ, 0)
	if e != nil {
		got = 65536
	}
	return r, w, got, nil
}

// BenchReadFull reads exactly len(b) bytes from fd with read(2), without
// the runtime poller (the fd is blocking). It returns the number of read
// calls made.
func BenchReadFull(f *os.File, b []byte) (calls int, err error) {
	fd := int(f.Fd())
	done := 0
	for done < len(b) {
		n, err := unix.Read(fd, b[done:])
		calls++
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return calls, fmt.Errorf("read %s: %w", f.Name(), err)
		}
		if n == 0 {
			return calls, fmt.Errorf("read %s: writer closed after %d of %d bytes: %w", f.Name(), done, len(b), os.ErrClosed)
		}
		done += n
	}
	return calls, nil
}

// BenchWriteFull writes all of b to f with write(2) on a blocking fd.
func BenchWriteFull(f *os.File, b []byte) error {
	fd := int(f.Fd())
	done := 0
	for done < len(b) {
		n, err := unix.Write(fd, b[done:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", f.Name(), err)
		}
		done += n
	}
	return nil
}

// BenchPeerAttr returns process attributes for a benchmark peer: it is
// killed when the parent thread dies, so no orphan keeps gigabytes mapped,
// and in a process group of its own, so Ctrl-C reaches only the parent,
// which ends the run in order.
func BenchPeerAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// BenchUname returns the kernel release and the host name.
func BenchUname() (release, nodename string) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", ""
	}
	return unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Nodename[:])
}
