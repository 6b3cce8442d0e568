// Package sys is wpg's shared door to the kernel: with the few protocol
// packages its door test allows (a backend's own internal package, such
// as the afpacket backend's TPACKET rings), it alone imports
// golang.org/x/sys/unix and unsafe. It owns the primitives: file
// descriptors (FD) and mappings (Mapping), each with one owner and an
// idempotent Close; errno helpers (IsPermission, IsNoMemory, IsEAGAIN, …)
// and ErrMemlock; clocks, CPU affinity, memfd, pipes, vmsplice,
// process_vm_* and xpmem. Every other package sees typed values and errors
// that unwrap to the system errno.
//
// Files are grouped by area: own_linux.go (FD, Mapping, memlock), sys_linux.go
// (threads, affinity, timers), pipe_linux.go, memfd_linux.go, pvm_linux.go
// (process_vm_*), child_linux.go (a helper child's control socket and
// pipe), xpmem_linux.go. Non-Linux builds get sys_other.go, which returns
// ErrNotSupported.
package sys
