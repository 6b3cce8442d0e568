package template

// pre64 is pre64Go in assembly (fast_amd64.s): the same bytes, with the
// loop's state in registers, the 48 bytes before seq copied in three
// 16-byte moves and the checksum folded with 32-bit adds.
//
//go:noescape
func pre64(bufs [][]byte, lens []int, arena []byte, off int, seq, w, be, sum uint64, c int, zero uint64) (n, next int)

// streamKernel is streamKernelGo in assembly (fast_amd64.s): the same
// bytes, with the frame's sums, its sequence word and the loop's state in
// registers, a 64-byte image in four vector registers.
//
//go:noescape
func streamKernel(bufs [][]byte, lens []int, k *kernelArgs) int
