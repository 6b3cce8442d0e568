// Package sys is wpg's one door to the kernel: it alone imports
// golang.org/x/sys/unix and unsafe. It owns file descriptors and mappings
// (each with one owner and an idempotent Close), ring structures, socket
// options, CPU affinity, memfd, vmsplice and process_vm_*; every other
// package sees typed values and errors that unwrap to the system errno.
//
// Files are grouped by area: sys_linux.go (threads, affinity, timers),
// packet_linux.go (AF_PACKET), pipe_linux.go, memfd_linux.go, pvm_linux.go
// (process_vm_*), xpmem_linux.go. Non-Linux builds get sys_other.go, which
// returns ErrNotSupported.
package sys
