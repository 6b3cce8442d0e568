// Package membench measures how fast a buffer moves between two processes
// on one machine, as the bandwidth matrix of the xpmem benchmark that wpg
// grew from: sizes (4K … 1G) × methods (local copy, shared-memory copy and
// in-place read, process_vm_readv, XPMEM copy and in-place read where
// /dev/xpmem exists, pipe), cold (first touch) and warm.
//
// The calling process is the importer: it runs the timed loops on a
// locked OS thread. The exporter is a second process (Config.PeerArgs;
// by default this executable re-run as `wpg membench --peer`, which calls
// ServePeer) that owns the memory, fills it with a seeded pattern, and
// reports the pattern's checksum; the importer's read or copy produces a
// checksum of its own that must match, so nothing can be optimised away
// and corruption is caught. The two meet over a unix socket (the memfd of
// the shared-memory methods is passed over it) and a pipe, both inherited.
//
// No privileges are needed: process_vm_readv reads a child process of the
// same user. Buffers are mmap'd and unmapped after every cell, so a 1 GiB
// matrix never holds more than about three buffers at once.
package membench
