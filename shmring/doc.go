// Package shmring is a single-producer, single-consumer ring of fixed-size
// slots in shared memory (a memfd), for moving frames between two
// processes without a system call per frame and without copies: the
// producer writes each frame straight into a slot, the consumer reads it in
// place (or copies it out), and the only shared writes per batch are one
// index store on each side.
//
// One process creates the ring (Create), passes its descriptor (Fd) to the
// other over a unix socket with SCM_RIGHTS, and the other maps it (Open).
// No files are created on disk; the memory is freed when both have closed
// it.
//
// Memory layout (all offsets in bytes, little-endian, within the memfd):
//
//	0     header: magic "WPGRING1", version, slot count, slot size, stride,
//	      data and length-table offsets
//	64    producer cache line: head (frames published), head futex word,
//	      consumer-sleeping flag
//	128   consumer cache line: tail (frames released), tail futex word,
//	      producer-sleeping flag
//	192   producer-closed and consumer-closed flags
//	4096  length table: one uint32 per slot
//	data  slots, each Stride bytes (64-byte aligned; page aligned when a slot
//	      is a page or more)
//
// The slot count is a power of two. Indices are free-running uint64
// counters; slot i lives at data + (i mod slots)*stride. The producer writes
// frames and their lengths and then publishes them with one atomic store of
// head; the consumer reads head, uses the frames, and gives the slots back
// with one atomic store of tail (Go's atomics are sequentially consistent,
// which on amd64 and arm64 orders the plain frame stores before the index
// store as another process sees them).
//
// Waiting: a side that finds the ring empty (consumer) or full (producer)
// polls for a short while, then announces that it sleeps and sleeps on a
// futex word in the ring; the other side wakes it only when the flag is
// set (a sleeping producer once a quarter of the ring is free), so a busy
// stream makes no system calls. With BusyWait a side spins
// instead of sleeping (lowest latency, one full core).
//
// The package needs no privileges. It is Linux-only (memfd, futex).
package shmring
