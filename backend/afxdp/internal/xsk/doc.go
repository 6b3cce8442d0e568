// Package xsk owns wpg's AF_XDP sockets: the UMEM (one anonymous mapping
// split into equal chunks, registered with the kernel and placed on a
// NUMA node with mbind), the four single-producer/single-consumer rings
// (fill, completion, TX, RX) mapped from the socket, bind with copy or
// zero-copy mode and need_wakeup, the busy-poll socket options, the
// socket's statistics, and the XDP program that steers wpg's signed
// frames into an XSKMAP (written with cilium/ebpf's assembler: no clang at
// build or run time).
//
// Ring indices live in shared memory: they are read with atomic loads and
// published with one atomic store per batch. Nothing here allocates per
// frame. A Socket is used by one goroutine (one engine worker, or the
// receive loop).
//
// Privileges: CAP_NET_RAW for the socket, CAP_NET_ADMIN and CAP_BPF (or
// root) for the XDP program and its map. The kernel pins the UMEM and
// charges it to RLIMIT_MEMLOCK unless the process has CAP_IPC_LOCK.
package xsk
