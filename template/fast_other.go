//go:build !amd64

package template

// pre64 renders a run of 64-byte prerendered frames: pre64Go, the loop in
// Go, on machines without one in assembly.
func pre64(bufs [][]byte, lens []int, arena []byte, off int, seq, w, be, sum uint64, c int, zero uint64) (n, next int) {
	return pre64Go(bufs, lens, arena, off, seq, w, be, sum, c, zero)
}

// streamKernel renders a chunk of a streamed stream: streamKernelGo, the
// loop in Go, on machines without one in assembly.
func streamKernel(bufs [][]byte, lens []int, k *kernelArgs) int {
	return streamKernelGo(bufs, lens, k)
}
