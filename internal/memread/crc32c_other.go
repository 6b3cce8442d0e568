//go:build !amd64

package memread

// useCRCFold is false: the folding kernel is amd64 assembly.
const useCRCFold = false

func crc32cFold(crc uint32, b []byte, k *[crcKN][2]uint64) uint32 { panic("unreachable") }
