package memread

import "github.com/wpg-dev/wpg/units"

// CopyImpl names a copy strategy for reports.
type CopyImpl struct {
	Name string
	How  string
}

// DefaultNTThreshold is the size from which a Copier streams its stores
// past the caches (non-temporal stores): a copy that large evicts
// everything anyway, and bypassing the caches saves the read-for-ownership
// of every destination line. Below it the stores stay cached so that a
// warm copy stays in L2/L3.
const DefaultNTThreshold = 128 << 20

// DefaultERMSMax is the size below which a Copier uses REP MOVSB on CPUs
// with ERMS; the AVX-512 loops take over from there. glibc stops REP MOVSB
// at 1 MiB on such CPUs, but on the Zen 5 this was measured on, REP MOVSB
// beat both the AVX-512 loops (regular and non-temporal stores) and
// glibc's choice at every size from 4 KiB to 1 GiB (docs/perf.md, membench
// section), so by default there is no limit.
const DefaultERMSMax = 1 << 62

// copyMin is the size below which the runtime's copy is used as is.
const copyMin = 4096

// A Copier is one copy strategy, chosen per run (LookupCopy) and passed
// by value: there is no process-wide switch. The zero value is the
// runtime's copy; AutoCopy is the assembly where the CPU has it.
type Copier struct {
	accel bool
	// NTThreshold is the size from which the AVX-512 loops use
	// non-temporal stores (DefaultNTThreshold).
	NTThreshold int
	// ERMSMax is the size below which REP MOVSB is used on CPUs with
	// ERMS (DefaultERMSMax).
	ERMSMax int
}

// AutoCopy returns the Copier that uses the assembly where this CPU has
// it, with the default thresholds.
func AutoCopy() Copier {
	return Copier{accel: true, NTThreshold: DefaultNTThreshold, ERMSMax: DefaultERMSMax}
}

// Copy copies min(len(dst), len(src)) bytes from src to dst with
// AutoCopy's strategy and returns the count, like the built-in copy.
// dst and src must not overlap.
func Copy(dst, src []byte) int { return AutoCopy().Copy(dst, src) }

// Copy copies min(len(dst), len(src)) bytes from src to dst and returns
// the count, like the built-in copy, choosing by size as glibc's memcpy
// does on the same CPUs: the runtime's copy below 4 KiB, REP MOVSB below
// ERMSMax (with ERMS), AVX-512 256-byte blocks above, with non-temporal
// stores from NTThreshold on. On CPUs without AVX-512 it is the runtime's
// copy. dst and src must not overlap.
func (c Copier) Copy(dst, src []byte) int {
	n := min(len(dst), len(src))
	if n < copyMin || !c.accel || !(useCopyAVX512 || useERMS) {
		return copy(dst, src)
	}
	if useERMS && (n < c.ERMSMax || !useCopyAVX512) {
		copyERMS(&dst[0], &src[0], n)
		return n
	}
	copyAVX512(&dst[0], &src[0], n, n >= c.NTThreshold)
	return n
}

// LookupCopy returns the copy strategy of name: "auto" (assembly where
// available) or "go" (the runtime's copy, runtime.memmove).
func LookupCopy(name string) (Copier, error) {
	switch name {
	case "", "auto":
		return AutoCopy(), nil
	case "go":
		return Copier{NTThreshold: DefaultNTThreshold, ERMSMax: DefaultERMSMax}, nil
	}
	return Copier{}, errUnknownCopy(name)
}

// How describes what the Copier does on this CPU, for reports.
func (c Copier) How() string {
	if (useCopyAVX512 || useERMS) && c.accel {
		how := "runtime copy below " + sizeString(copyMin)
		switch {
		case useERMS && c.ERMSMax >= 1<<62:
			return how + ", rep movsb above (ERMS)"
		case useERMS:
			how += ", rep movsb below " + sizeString(c.ERMSMax)
		}
		return how + ", then avx512 64B loads/stores ×4 unrolled (256 B/iteration), non-temporal stores from " + sizeString(c.NTThreshold)
	}
	return "Go copy() (runtime.memmove)"
}

func sizeString(n int) string { return units.FormatSize(int64(n)) }
