package header

import (
	"encoding/binary"
	"math/bits"
)

// Sum adds b to the running one's-complement sum initial and returns the
// new, not yet folded sum. b is taken as a sequence of big-endian 16-bit
// words starting at an even offset of the checksummed data; an odd trailing
// byte is padded with zero. Chain calls only on pieces of even length
// (except the last one).
func Sum(b []byte, initial uint64) uint64 {
	s := initial
	var c uint64
	for len(b) >= 32 {
		s, c = bits.Add64(s, binary.BigEndian.Uint64(b[0:]), 0)
		s, c = bits.Add64(s, binary.BigEndian.Uint64(b[8:]), c)
		s, c = bits.Add64(s, binary.BigEndian.Uint64(b[16:]), c)
		s, c = bits.Add64(s, binary.BigEndian.Uint64(b[24:]), c)
		s, c = bits.Add64(s, c, 0)
		s += c
		b = b[32:]
	}
	for len(b) >= 8 {
		s, c = bits.Add64(s, binary.BigEndian.Uint64(b), 0)
		s += c
		b = b[8:]
	}
	if len(b) >= 4 {
		s, c = bits.Add64(s, uint64(binary.BigEndian.Uint32(b)), 0)
		s += c
		b = b[4:]
	}
	if len(b) >= 2 {
		s, c = bits.Add64(s, uint64(binary.BigEndian.Uint16(b)), 0)
		s += c
		b = b[2:]
	}
	if len(b) == 1 {
		s, c = bits.Add64(s, uint64(b[0])<<8, 0)
		s += c
	}
	return s
}

// Fold reduces a running sum to 16 bits (one's-complement addition of its
// 16-bit words). The result is the sum, not yet complemented.
func Fold(s uint64) uint16 {
	// Add the two 32-bit halves twice, with end-around carry: t < 2^33,
	// then t < 2^32. Then Linux's csum_fold: the 16-bit halves of u added
	// in the top half of u + u rotated by 16, whose carry out of the low
	// half is the end-around carry. Only 0 folds to 0; 0xffff is kept.
	t := (s >> 32) + (s & 0xffffffff)
	t = (t >> 32) + (t & 0xffffffff)
	u := uint32(t)
	return uint16((u + bits.RotateLeft32(u, 16)) >> 16)
}

// Checksum returns the internet checksum (RFC 1071) of b with initial as
// the running sum of data before it (for example a pseudo-header sum):
// the one's complement of the folded sum.
func Checksum(b []byte, initial uint64) uint16 {
	return ^Fold(Sum(b, initial))
}

// ChecksumValid reports whether data b, with initial as the running sum
// of data before it (a pseudo-header sum), checksums to zero: a received
// header or datagram whose checksum field is right.
func ChecksumValid(b []byte, initial uint64) bool { return Fold(Sum(b, initial)) == 0xffff }

// Word64Sum returns the one's-complement sum of the four big-endian 16-bit
// words of v, unfolded. It is the contribution of 8 bytes holding v at an
// even offset.
func Word64Sum(v uint64) uint64 {
	return (v >> 48) + (v >> 32 & 0xffff) + (v >> 16 & 0xffff) + (v & 0xffff)
}

// Update returns checksum csum after a 16-bit word of the checksummed data
// changed from old to new (RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m')).
func Update(csum, old, new uint16) uint16 {
	s := uint64(^csum) + uint64(^old) + uint64(new)
	return ^Fold(s)
}

// UpdateSum returns checksum csum after data whose one's-complement sum was
// oldSum became data whose sum is newSum (both folded or not): the RFC 1624
// update generalised to any even-aligned span of words.
func UpdateSum(csum uint16, oldSum, newSum uint64) uint16 {
	s := uint64(^csum) + uint64(^Fold(oldSum)) + uint64(Fold(newSum))
	return ^Fold(s)
}

// Swap16 swaps the bytes of a 16-bit one's-complement sum: the sum of data
// that starts at an odd offset of the checksummed data is the byte-swapped
// sum of the same data taken from an even offset (RFC 1071 §2(B)).
func Swap16(s uint16) uint16 { return s<<8 | s>>8 }

// PseudoSumIPv4 returns the sum of the IPv4 pseudo-header (RFC 768/793):
// source and destination address, protocol and upper-layer length.
func PseudoSumIPv4(src, dst []byte, proto uint8, length int) uint64 {
	return uint64(binary.BigEndian.Uint32(src)) + uint64(binary.BigEndian.Uint32(dst)) +
		uint64(proto) + uint64(length)
}

// PseudoSumIPv6 returns the sum of the IPv6 pseudo-header (RFC 8200 §8.1):
// source and destination address, upper-layer length and next header.
func PseudoSumIPv6(src, dst []byte, proto uint8, length int) uint64 {
	s := Sum(src[:16], 0)
	s = Sum(dst[:16], s)
	// The address sums can reach 2^64-1: add the rest with end-around carry.
	s, c := bits.Add64(s, uint64(proto)+uint64(uint32(length)), 0)
	return s + c
}
