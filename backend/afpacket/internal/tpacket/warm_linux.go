//go:build linux

package tpacket

// Warming (TxRing.Commit, linear frames only): frames of at least
// warmMin bytes in rings larger than warmRingMin. Smaller frames were just
// written whole by the source; a smaller ring stays in the core's L2 from
// one lap to the next (there warming measured 4-6 % slower: the loads hit
// anyway). With 4096 slots of 2 KiB it measured 1-11 % faster at 1500 B on
// veth and lo (docs/perf.md, AF_PACKET baseline, sitting 5).
const (
	warmMin     = 256
	warmRingMin = 1 << 20
)

// warm loads one byte of every cache line of a frame about to be sent
// linear, and returns them XORed (so the loads are kept). A slot of a deep
// ring was last touched a whole lap ago (8 MiB ago for 4096 slots of
// 2 KiB) and a source that wrote only the bytes that vary (template
// KeepFrames) left the rest of it wherever it was evicted to. The kernel's
// copy into the skb head would then take those misses one after the other;
// independent loads here keep many in flight, and the copy finds the lines
// in the cache.
func warm(b []byte) byte {
	var acc byte
	for off := 0; off < len(b); off += 64 {
		acc ^= b[off]
	}
	return acc ^ b[len(b)-1]
}
