package peer

import "github.com/wpg-dev/wpg/backend"

// SlotStride is the distance between staging slots: whole pages for frames
// of a page or more (each frame starts page aligned), else 64 bytes.
func SlotStride(maxFrame int) int {
	if maxFrame >= 4096 {
		return (maxFrame + 4095) &^ 4095
	}
	return (maxFrame + 63) &^ 63
}

// CheckSlots refuses a --slots beyond what the backend name's ring takes
// (limit), which SlotCount would otherwise lower without a word.
func CheckSlots(name string, want, limit int) error {
	if want > limit {
		return backend.Errorf(name, "--slots %d: its descriptor ring takes at most %d slots: give --slots %d or fewer (0: the default for the frame size)", want, limit, limit)
	}
	return nil
}

// SlotCount returns how many staging slots to use: want when given (at most
// limit), else about budget bytes of slots, at least 4 (2 for frames above
// 64 MiB) and at most limit.
func SlotCount(maxFrame, want, budget, limit int) int {
	if want > 0 {
		return min(want, limit)
	}
	n := budget / SlotStride(maxFrame)
	lo := 4
	if maxFrame > 64<<20 {
		lo = 2
	}
	return min(max(n, lo), limit)
}
