package frame

import "hash/crc32"

// castagnoli is the CRC-32C table of the payload checksum.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC-32C arithmetic modulo the Castagnoli polynomial in the reflected bit
// order of hash/crc32 (as in zlib's crc32_combine): appending m zero bytes
// to a raw CRC register multiplies it by x^(8m). With it the checksum of
// "base with stamps" is the base checksum xor the stamp's contribution
// multiplied by a per-size constant, computed once.
const castagnoliReflected = 0x82f63b78

// multModP returns a*b modulo P (reflected representation, x^0 = 1<<31).
func multModP(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
			if a&(m-1) == 0 {
				break
			}
		}
		if b&1 != 0 {
			b = b>>1 ^ castagnoliReflected
		} else {
			b >>= 1
		}
	}
	return p
}

// x2n[k] is x^(2^k) modulo P.
var x2n = func() (t [32]uint32) {
	p := uint32(1) << 30 // x^1
	for k := range t {
		t[k] = p
		p = multModP(p, p)
	}
	return
}()

// xpowBytes returns x^(8*m) modulo P: the effect of m zero bytes.
func xpowBytes(m uint64) uint32 {
	p := uint32(1) << 31
	for k := 3; m != 0; m, k = m>>1, k+1 {
		if m&1 != 0 {
			p = multModP(x2n[k&31], p)
		}
	}
	return p
}

// stampLinear is the raw (zero-initialised, unconditioned) CRC register of
// the 8 stamp bytes: the linear part of their contribution.
func stampLinear(stamp uint64) uint32 {
	var crc uint32
	for i := 0; i < 8; i++ {
		crc = castagnoli[byte(crc)^byte(stamp>>(8*i))] ^ crc>>8
	}
	return crc
}
