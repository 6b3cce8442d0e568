//go:build !amd64

package sys

// TSCAvailable reports whether this build can read the time-stamp counter
// directly (x86-64 only).
const TSCAvailable = false

// Rdtsc returns 0: there is no time-stamp counter on this architecture.
func Rdtsc() uint64 { return 0 }

// CPUID returns zeros: CPUID exists only on x86.
func CPUID(leaf, sub uint32) (eax, ebx, ecx, edx uint32) { return 0, 0, 0, 0 }

// Pause does nothing on this architecture.
func Pause() {}
