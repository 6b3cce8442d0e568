package memread

import "golang.org/x/sys/cpu"

// sum64AVX512 sums len(b)&^255 bytes of b with four 64-byte accumulators.
//
//go:noescape
func sum64AVX512(b []byte) uint64

// sum64AVX2 sums len(b)&^255 bytes of b with eight 32-byte accumulators.
//
//go:noescape
func sum64AVX2(b []byte) uint64

// copyAVX512 copies n ≥ 256 bytes; dst and src do not overlap.
//
//go:noescape
func copyAVX512(dst, src *byte, n int, nt bool)

var useCopyAVX512 = cpu.X86.HasAVX512F

func archImpls() []Impl {
	var out []Impl
	if cpu.X86.HasAVX512F {
		out = append(out, Impl{Name: "avx512", How: "avx512 64B loads ×4 unrolled (256 B/iteration, 4 accumulators)", Sum: sumAVX512})
	}
	if cpu.X86.HasAVX2 {
		out = append(out, Impl{Name: "avx2", How: "avx2 32B loads ×8 unrolled (256 B/iteration, 8 accumulators)", Sum: sumAVX2})
	}
	return out
}

func sumAVX512(b []byte) uint64 {
	bulk := len(b) &^ 255
	return sum64AVX512(b[:bulk]) + Sum64Generic(b[bulk:])
}

func sumAVX2(b []byte) uint64 {
	bulk := len(b) &^ 255
	return sum64AVX2(b[:bulk]) + Sum64Generic(b[bulk:])
}
