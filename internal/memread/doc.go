// Package memread reads memory in place as fast as the CPU allows: Sum64
// adds up a buffer as little-endian 64-bit words with the widest loads the
// CPU has (AVX-512 or AVX2 Go assembly on amd64, an unrolled pure-Go loop
// elsewhere). The sum is the checksum `wpg membench` compares between the
// exporting and the importing process, so the read can never be optimised
// away and a wrong byte is caught.
//
// Copy is the copy of membench's copying methods: REP MOVSB where the CPU
// has ERMS (measured fastest from 4 KiB to 1 GiB on the Zen 5 wpg was
// tuned on), AVX-512 loops with regular or non-temporal stores otherwise,
// and the runtime's copy for small buffers and other CPUs.
//
// CRC32C is the payload receivers' CRC-32C: hash/crc32's value, computed by
// folding with VPCLMULQDQ on AVX-512 CPUs (about four times the speed of
// hash/crc32's crc32-instruction loop on cache-resident data).
//
// It needs no privileges and allocates nothing.
package memread
