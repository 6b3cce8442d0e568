//go:build !amd64

package memread

func archImpls() []Impl { return nil }

const (
	useCopyAVX512 = false
	useERMS       = false
)

func copyERMS(dst, src *byte, n int) { panic("unreachable") }

func copyAVX512(dst, src *byte, n int, nt bool) { panic("unreachable") }
