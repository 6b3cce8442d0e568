//go:build linux

package sys

// Messages with passed files on SOCK_SEQPACKET sockets, whole reads and
// writes on blocking descriptors, process_vm_readv of a whole buffer, a
// pipe enlarged towards a size, and the system's name: what a helper child
// protocol (wpg membench's exporter) needs. Mappings are Mapping
// (own_linux.go), memory files MemfdCreate (memfd_linux.go).

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// MemfdFile creates a memfd of size bytes (MemfdCreate) as an *os.File
// named "memfd:NAME", ready to pass to another process and to MapFile.
func MemfdFile(name string, size int) (*os.File, error) {
	if size <= 0 {
		return nil, fmt.Errorf("memfd %s: size %d must be positive", name, size)
	}
	fd, err := MemfdCreate(name, int64(size))
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "memfd:"+name), nil
}

// PipeSized returns a pipe (read end, write end), close-on-exec and
// blocking, enlarged towards want bytes (SetPipeSize), and its capacity:
// when the kernel refuses want, it halves down to 64 KiB, and keeps the
// default capacity when it refuses all of those.
func PipeSized(want int, name string) (r, w *os.File, capacity int, err error) {
	rfd, wfd, err := NewPipe()
	if err != nil {
		return nil, nil, 0, err
	}
	r, w = os.NewFile(uintptr(rfd), name+"-r"), os.NewFile(uintptr(wfd), name+"-w")
	for sz := want; sz >= 65536; sz /= 2 {
		if got, e := SetPipeSize(wfd, sz); e == nil {
			return r, w, got, nil
		}
	}
	got, e := PipeSize(wfd)
	if e != nil {
		got = 65536
	}
	return r, w, got, nil
}

// ReadFull reads exactly len(b) bytes from f with read(2) (Read), without
// the runtime poller (f is blocking). It returns the number of read calls
// made.
func ReadFull(f *os.File, b []byte) (calls int, err error) {
	fd := int(f.Fd())
	done := 0
	for done < len(b) {
		n, err := Read(fd, b[done:])
		calls++
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

// WriteFull writes all of b to f with write(2) (Write) on a blocking fd.
func WriteFull(f *os.File, b []byte) error {
	fd := int(f.Fd())
	done := 0
	for done < len(b) {
		n, err := Write(fd, b[done:])
		if err != nil {
			return fmt.Errorf("write %s: %w", f.Name(), err)
		}
		done += n
	}
	return nil
}

// ReadRemote copies len(dst) bytes from address remote in process pid
// into dst with process_vm_readv (ProcessVMReadv), looping over partial
// transfers. It returns the number of system calls made.
func ReadRemote(pid int, dst []byte, remote uintptr) (calls int, err error) {
	done := 0
	for done < len(dst) {
		k, err := ProcessVMReadv(pid, dst[done:], remote+uintptr(done))
		calls++
		if err != nil {
			if errors.Is(err, unix.EPERM) {
				return calls, fmt.Errorf("%w (needs the same uid and a dumpable target, or CAP_SYS_PTRACE; check /proc/sys/kernel/yama/ptrace_scope)", err)
			}
			return calls, err
		}
		if k == 0 {
			return calls, fmt.Errorf("process_vm_readv from pid %d at %#x: no progress after %d of %d bytes", pid, remote, done, len(dst))
		}
		done += k
	}
	return calls, nil
}

// SeqpacketPair returns a connected pair of SOCK_SEQPACKET unix sockets
// (message boundaries kept, fds passable), close-on-exec.
func SeqpacketPair() (*os.File, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair(AF_UNIX, SOCK_SEQPACKET): %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "seqpacket-0"), os.NewFile(uintptr(fds[1]), "seqpacket-1"), nil
}

// SendMsgFile sends one message on a SOCK_SEQPACKET socket, with an
// optional file passed as SCM_RIGHTS.
func SendMsgFile(sock *os.File, msg []byte, f *os.File) error {
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

// RecvMsgFile receives one message (at most len(buf) bytes) and a passed
// file if one came with it. It returns io.EOF-like os.ErrClosed wrapped
// when the peer closed its end (a zero-length read).
func RecvMsgFile(sock *os.File, buf []byte) (int, *os.File, error) {
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

// AllowPtracer lets process pid read this process's memory where the
// Yama LSM restricts it (ptrace_scope 1: only ancestors may otherwise).
// Without Yama the call is refused and that refusal is ignored.
func AllowPtracer(pid int) {
	_ = unix.Prctl(unix.PR_SET_PTRACER, uintptr(pid), 0, 0, 0)
}

// ChildAttr returns process attributes for a helper child: it is killed
// when the parent thread dies, so no orphan keeps gigabytes mapped, and it
// is in a process group of its own, so Ctrl-C reaches only the parent,
// which ends the run in order.
func ChildAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// Uname returns the kernel release and the host name.
func Uname() (release, nodename string) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", ""
	}
	return unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Nodename[:])
}
