package sys

// TSCAvailable reports whether this build can read the time-stamp counter
// directly (x86-64 only). Whether the counter is invariant is a separate
// question: see CPUID.
const TSCAvailable = true

// Rdtsc reads the time-stamp counter (RDTSC, unserialised: a pacing loop
// wants the cheapest read, not an ordering fence).
func Rdtsc() uint64

// CPUID executes CPUID with EAX=leaf and ECX=sub.
func CPUID(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// Pause executes PAUSE, the spin-wait hint that yields pipeline resources to
// an SMT sibling and saves power in a busy loop.
func Pause()
