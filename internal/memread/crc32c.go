package memread

import "hash/crc32"

// castagnoli is hash/crc32's CRC-32C table (the portable path and short
// buffers), the module's one.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32CTable returns hash/crc32's CRC-32C table, for code that updates a
// CRC-32C byte by byte or with crc32.Update (the payload frames' stamps).
func CRC32CTable() *crc32.Table { return castagnoli }

// CRC32C returns the CRC-32C (Castagnoli) of b updated from crc, exactly
// what crc32.Update(crc, crc32.MakeTable(crc32.Castagnoli), b) returns.
// On amd64 CPUs with AVX-512 and VPCLMULQDQ, buffers of crcFoldMin bytes
// or more are folded with carry-less multiplies, 256 bytes per iteration
// in four 64-byte lanes (several times the speed of the SSE 4.2 crc32
// instruction that hash/crc32 uses, which one core runs at about 17 GB/s);
// elsewhere, and for short buffers, it is hash/crc32.
func CRC32C(crc uint32, b []byte) uint32 {
	if useCRCFold && len(b) >= crcFoldMin {
		return ^crc32cFold(^crc, b, &crcFoldK)
	}
	return crc32.Update(crc, castagnoli, b)
}

// CRC32CImpl names the CRC-32C implementation CRC32C uses for large
// buffers on this CPU, for reports: "avx512-vpclmulqdq" or "sse4.2/table
// (hash/crc32)".
func CRC32CImpl() string {
	if useCRCFold {
		return "avx512-vpclmulqdq"
	}
	return "hash/crc32"
}

// crcFoldMin is the shortest buffer the folding kernel takes: it starts
// with four 64-byte lanes, and below a few hundred bytes hash/crc32 is as
// fast.
const crcFoldMin = 512

// Folding constants. In hash/crc32's reflected bit order a 32-bit value
// with bit j set stands for x^(31-j). A 16-byte lane of the message holds
// L (bytes 0–7, the higher powers) and H (bytes 8–15); carrying the lane d
// bits further towards the end of the message multiplies it by x^d, which
// modulo P is clmul(L, x^(d+31) mod P) xor clmul(H, x^(d-33) mod P) (the
// offsets absorb where a carry-less product of reflected operands lands).
// Each entry is {low-qword constant, high-qword constant} for one
// distance.
const (
	crcK256 = iota // 2048 bits: each lane of the 4 × 64-byte loop
	crcK64         // 512 bits: one 64-byte register onto the next
	crcK48         // 384 bits
	crcK32         // 256 bits
	crcK16         // 128 bits: one 16-byte lane onto the next
	crcKN
)

var crcFoldK = func() (k [crcKN][2]uint64) {
	for i, bytes := range [crcKN]uint64{256, 64, 48, 32, 16} {
		d := 8 * bytes
		k[i] = [2]uint64{uint64(CRC32CXPow(d + 31)), uint64(CRC32CXPow(d - 33))}
	}
	return
}()

// castagnoliReflected is the CRC-32C polynomial, reflected.
const castagnoliReflected = 0x82f63b78

// CRC32CMulMod returns a·b modulo the Castagnoli polynomial, in
// hash/crc32's reflected bit order (x^0 is 1<<31): the arithmetic that
// moves a CRC-32C register past data without reading it (as zlib's
// crc32_combine).
func CRC32CMulMod(a, b uint32) uint32 {
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

// CRC32CXPow returns x^n modulo the Castagnoli polynomial (reflected):
// appending n/8 zero bytes to a raw CRC-32C register multiplies it by
// CRC32CXPow(n).
func CRC32CXPow(n uint64) uint32 {
	r, sq := uint32(1)<<31, uint32(1)<<30 // x^0, x^1
	for ; n != 0; n >>= 1 {
		if n&1 != 0 {
			r = CRC32CMulMod(r, sq)
		}
		sq = CRC32CMulMod(sq, sq)
	}
	return r
}
