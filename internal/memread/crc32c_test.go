package memread

import (
	"hash/crc32"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestCRC32C compares CRC32C with hash/crc32 for every length around the
// kernel's block boundaries, at odd alignments and with initial values.
func TestCRC32C(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 1<<20+300)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	tab := crc32.MakeTable(crc32.Castagnoli)
	var lens []int
	for n := 0; n <= 1100; n++ {
		lens = append(lens, n)
	}
	lens = append(lens, 4095, 4096, 4097, 460800, 1<<20, 1<<20+17)
	for _, n := range lens {
		for _, off := range []int{0, 1, 7, 63} {
			for _, init := range []uint32{0, 0xffffffff, 0x12345678} {
				b := buf[off : off+n]
				if got, want := CRC32C(init, b), crc32.Update(init, tab, b); got != want {
					t.Fatalf("CRC32C(%#x, %d bytes at +%d) = %#x, hash/crc32 %#x (%s)", init, n, off, got, want, CRC32CImpl())
				}
			}
		}
	}
}

// TestCRC32CDetects flips single bits and swaps words in a 1 MiB buffer:
// every change must change the checksum (a CRC catches every single-bit
// error and every burst up to 32 bits).
func TestCRC32CDetects(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	want := CRC32C(0, b)
	for i := 0; i < 2000; i++ {
		p := r.IntN(len(b))
		bit := byte(1) << r.IntN(8)
		b[p] ^= bit
		if CRC32C(0, b) == want {
			t.Fatalf("flipping bit %#x of byte %d left the CRC unchanged", bit, p)
		}
		b[p] ^= bit
	}
	if CRC32C(0, b) != want {
		t.Fatal("CRC not restored")
	}
}

func BenchmarkCRC32C(b *testing.B) {
	tab := crc32.MakeTable(crc32.Castagnoli)
	for _, n := range []int{4096, 460800, 1 << 20, 64 << 20} {
		buf := make([]byte, n)
		for i := range buf {
			buf[i] = byte(i * 7)
		}
		b.Run("fold/"+sizeLabel(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				CRC32C(0, buf)
			}
		})
		b.Run("hash-crc32/"+sizeLabel(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				crc32.Update(0, tab, buf)
			}
		})
	}
}

func sizeLabel(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.Itoa(n>>20) + "MiB"
	}
	return strconv.Itoa(n) + "B"
}

// TestCRC32CFoldKernel runs the folding kernel itself from its shortest
// input (256 bytes, where it skips the 256-byte loop) up, where the CPU
// has it.
func TestCRC32CFoldKernel(t *testing.T) {
	if !useCRCFold {
		t.Skip("this CPU has no AVX-512 VPCLMULQDQ: CRC32C is hash/crc32 here")
	}
	tab := crc32.MakeTable(crc32.Castagnoli)
	b := make([]byte, 2048)
	for i := range b {
		b[i] = byte(i*131 + i>>8)
	}
	for n := 256; n <= len(b); n++ {
		if got, want := ^crc32cFold(^uint32(7), b[:n], &crcFoldK), crc32.Update(7, tab, b[:n]); got != want {
			t.Fatalf("%d bytes: fold %#x, hash/crc32 %#x", n, got, want)
		}
	}
}
