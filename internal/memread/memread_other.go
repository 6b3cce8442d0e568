//go:build !amd64

package memread

// archSums returns no assembly readers: they are amd64 only.
func archSums() map[string]func([]byte) uint64 { return nil }

const (
	useCopyAVX512 = false
	useERMS       = false
)

func copyERMS(dst, src *byte, n int) { panic("unreachable") }

func copyAVX512(dst, src *byte, n int, nt bool) { panic("unreachable") }
