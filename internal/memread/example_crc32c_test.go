package memread_test

import (
	"bytes"
	"fmt"
	"hash/crc32"

	"github.com/wpg-dev/wpg/internal/memread"
)

// CRC32C is hash/crc32's CRC-32C, also for buffers long enough for the
// folding kernel, and it continues from an earlier value like crc32.Update.
func ExampleCRC32C() {
	fmt.Printf("%#08x\n", memread.CRC32C(0, []byte("123456789"))) // the CRC-32C check value
	b := bytes.Repeat([]byte("wpg payload "), 100_000)
	whole := memread.CRC32C(0, b)
	parts := memread.CRC32C(memread.CRC32C(0, b[:4099]), b[4099:])
	fmt.Println(whole == parts, whole == crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
	// Output:
	// 0xe3069283
	// true true
}
