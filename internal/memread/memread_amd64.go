package memread

import "golang.org/x/sys/cpu"

// sum64AVX512 sums the first len(b)&^7 bytes of b as words, with four
// 64-byte accumulators.
//
//go:noescape
func sum64AVX512(b []byte) uint64

// sum64AVX2 sums the first len(b)&^7 bytes of b as words, with eight
// 32-byte accumulators.
//
//go:noescape
func sum64AVX2(b []byte) uint64

// copyAVX512 copies n ≥ 256 bytes; dst and src do not overlap.
//
//go:noescape
func copyAVX512(dst, src *byte, n int, nt bool)

// copyERMS copies n bytes with REP MOVSB.
//
//go:noescape
func copyERMS(dst, src *byte, n int)

var (
	useCopyAVX512 = cpu.X86.HasAVX512F
	useERMS       = cpu.X86.HasERMS
)

// archSums returns the assembly readers this CPU can run, by name.
func archSums() map[string]func([]byte) uint64 {
	m := map[string]func([]byte) uint64{}
	if cpu.X86.HasAVX512F {
		m["avx512"] = sumAVX512
	}
	if cpu.X86.HasAVX2 {
		m["avx2"] = sumAVX2
	}
	return m
}

func sumAVX512(b []byte) uint64 {
	s := sum64AVX512(b)
	if r := len(b) & 7; r != 0 {
		s += tailWord(b[len(b)-r:])
	}
	return s
}

func sumAVX2(b []byte) uint64 {
	s := sum64AVX2(b)
	if r := len(b) & 7; r != 0 {
		s += tailWord(b[len(b)-r:])
	}
	return s
}
