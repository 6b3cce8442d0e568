package engine

import "testing"

// TestSumLens checks the batch byte count for every length of batch up to
// a few groups of four, remainders included.
func TestSumLens(t *testing.T) {
	lens := make([]int, 19)
	for i := range lens {
		lens[i] = 60 + 7*i
	}
	for n := range len(lens) + 1 {
		var want uint64
		for _, l := range lens[:n] {
			want += uint64(l)
		}
		if got := sumLens(lens[:n]); got != want {
			t.Errorf("sumLens of %d lengths = %d, want %d", n, got, want)
		}
	}
}
