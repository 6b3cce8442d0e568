package memread

import "golang.org/x/sys/cpu"

// useCRCFold: the folding kernel needs AVX-512F, VPCLMULQDQ on 512-bit
// registers, PCLMULQDQ and SSE 4.2 (crc32 for the last 16 bytes and the
// tail).
var useCRCFold = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VPCLMULQDQ && cpu.X86.HasPCLMULQDQ && cpu.X86.HasSSE42

// crc32cFold returns the raw CRC-32C register after b (len(b) ≥ 256),
// starting from the raw register crc (callers invert before and after).
//
//go:noescape
func crc32cFold(crc uint32, b []byte, k *[crcKN][2]uint64) uint32
