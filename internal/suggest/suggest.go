// Package suggest finds the word a typo was meant to be: the "did you
// mean" of template keys and command-line flags. It is pure (no I/O).
package suggest

import "strings"

// Closest returns the candidate within edit distance 2 of s (compared in
// lower case), the nearest one first in cands on a tie; "" when none is.
func Closest(s string, cands []string) string {
	best, bestD := "", 3
	for _, c := range cands {
		if d := Distance(strings.ToLower(s), c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// Distance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and swaps of two adjacent letters
// cost one each, so that a typo's transposition ("dts" for "dst") is
// nearer its word than a word two letters away ("ttl").
func Distance(a, b string) int {
	prev2 := make([]int, len(b)+1) // row i-2
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
