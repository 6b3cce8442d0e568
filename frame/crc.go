package frame

import "github.com/wpg-dev/wpg/internal/memread"

// castagnoli is the CRC-32C table of the payload checksum (memread's, the
// module's one).
var castagnoli = memread.CRC32CTable()

// The stamps' CRC-32C contributions use memread's arithmetic modulo the
// Castagnoli polynomial (CRC32CMulMod, CRC32CXPow, as zlib's
// crc32_combine): appending m zero bytes to a raw CRC register multiplies
// it by x^(8m). With it the checksum of "base with stamps" is the base
// checksum xor the stamp's contribution multiplied by a per-size
// constant, computed once.

// stampLinear is the raw (zero-initialised, unconditioned) CRC register of
// the 8 stamp bytes: the linear part of their contribution.
func stampLinear(stamp uint64) uint32 {
	var crc uint32
	for i := 0; i < 8; i++ {
		crc = castagnoli[byte(crc)^byte(stamp>>(8*i))] ^ crc>>8
	}
	return crc
}
