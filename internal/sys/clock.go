package sys

import _ "unsafe" // for go:linkname

// nanotime is the runtime's monotonic clock: on Linux it reads
// CLOCK_MONOTONIC through the vDSO, without a system call.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// NanotimeNs reads CLOCK_MONOTONIC in nanoseconds through the vDSO (the
// runtime's own clock). It is the same timescale as MonotonicNs but costs
// tens of nanoseconds instead of a system call, so pacing loops use it.
func NanotimeNs() int64 { return nanotime() }
