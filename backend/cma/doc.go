// Package cma is wpg's cross-memory-attach data path: the receiver copies
// each frame straight out of the sender's private memory with
// process_vm_readv(2), the stock kernel's one-copy transfer between two
// processes (the analogue of an XPMEM copy).
//
// The sender renders frames into its own page-aligned staging slots and
// publishes (slot, length) descriptors through a small shared-memory ring
// (package shmring, passed as a memfd over the rendezvous socket); the
// receiver pulls a batch of published frames with one process_vm_readv
// call, one iovec per run of consecutive slots (partial transfers are
// resumed where they stopped), and then gives the slots back through the
// ring. No frame data
// crosses a socket or a shared mapping.
//
// Permission: process_vm_readv needs PTRACE_MODE_ATTACH_REALCREDS over the
// sender (same user and a dumpable sender, or CAP_SYS_PTRACE). Under Yama
// ptrace_scope 1 only descendants may attach, so the sender calls
// prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY) before it announces itself;
// ptrace_scope 2 needs CAP_SYS_PTRACE in the receiver and 3 forbids the
// path altogether, which the error then says.
//
// The receiver listens (`wpg recv --backend cma --listen SOCK`); the sender
// connects or starts one itself. Linux only; no privileges beyond the
// above.
package cma
