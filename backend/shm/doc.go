// Package shm is wpg's shared-memory data path: a ring of slots in a memfd
// (package shmring) shared by the sending and the receiving process. The
// engine renders each frame straight into its ring slot; the receiver reads
// it in place (--recv-mode inplace, the default) or copies it out to private
// memory first (--recv-mode copy, the classic copy-in/copy-out ring). An
// idle side sleeps on a futex in the ring after a short poll; --busy-wait
// makes both sides spin instead.
//
// The two processes meet over a unix stream socket: the receiver listens
// (`wpg recv --backend shm --listen SOCK`), the sender connects
// (`--connect SOCK`) or, without --connect, starts such a receiver itself,
// and passes the ring's memfd with SCM_RIGHTS. The socket stays open for
// the run: when either process dies the other sees it close, so a sender
// whose receiver died stops with an error and its counts, and a receiver
// whose sender died reports what it got.
//
// No privileges are needed. Linux only.
package shm
