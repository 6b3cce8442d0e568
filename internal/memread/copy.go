package memread

import "github.com/wpg-dev/wpg/units"

// CopyImpl names a copy strategy for reports.
type CopyImpl struct {
	Name string
	How  string
}

// NTThreshold is the size from which Copy streams its stores past the
// caches (non-temporal stores): a copy that large evicts everything
// anyway, and bypassing the caches saves the read-for-ownership of every
// destination line. Below it the stores stay cached so that a warm copy
// stays in L2/L3.
var NTThreshold = 128 << 20

// ERMSMax is the size below which Copy uses REP MOVSB on CPUs with ERMS;
// the AVX-512 loops take over from there. glibc stops REP MOVSB at 1 MiB
// on such CPUs, but on the Zen 5 this was measured on, REP MOVSB beat
// both the AVX-512 loops (regular and non-temporal stores) and glibc's
// choice at every size from 4 KiB to 1 GiB (docs/perf.md, membench section), so by
// default there is no limit.
var ERMSMax = 1 << 62

// copyMin is the size below which the runtime's copy is used as is.
const copyMin = 4096

// Copy copies min(len(dst), len(src)) bytes from src to dst and returns
// the count, like the built-in copy, choosing by size as glibc's memcpy
// does on the same CPUs: the runtime's copy below 4 KiB, REP MOVSB below
// ERMSMax (with ERMS), AVX-512 256-byte blocks above, with non-temporal
// stores from NTThreshold on. On CPUs without AVX-512 it is the runtime's
// copy. dst and src must not overlap.
func Copy(dst, src []byte) int {
	n := min(len(dst), len(src))
	if n < copyMin || !copyAccel || !(useCopyAVX512 || useERMS) {
		return copy(dst, src)
	}
	if useERMS && (n < ERMSMax || !useCopyAVX512) {
		copyERMS(&dst[0], &src[0], n)
		return n
	}
	copyAVX512(&dst[0], &src[0], n, n >= NTThreshold)
	return n
}

// copyAccel switches Copy's assembly on or off (UseCopy).
var copyAccel = true

// UseCopy selects the copy strategy: "auto" (assembly where available) or
// "go" (the runtime's copy, runtime.memmove).
func UseCopy(name string) error {
	switch name {
	case "", "auto":
		copyAccel = true
	case "go":
		copyAccel = false
	default:
		return errUnknownCopy(name)
	}
	return nil
}

// CopyHow describes what Copy does on this CPU, for reports.
func CopyHow() string {
	if (useCopyAVX512 || useERMS) && copyAccel {
		how := "runtime copy below " + sizeString(copyMin)
		switch {
		case useERMS && ERMSMax >= 1<<62:
			return how + ", rep movsb above (ERMS)"
		case useERMS:
			how += ", rep movsb below " + sizeString(ERMSMax)
		}
		return how + ", then avx512 64B loads/stores ×4 unrolled (256 B/iteration), non-temporal stores from " + sizeString(NTThreshold)
	}
	return "Go copy() (runtime.memmove)"
}

func sizeString(n int) string { return units.FormatSize(int64(n)) }
