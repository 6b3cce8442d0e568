package peer

import "testing"

func TestWriteGroup(t *testing.T) {
	for _, c := range []struct {
		lens          []int
		stride, limit int
		k, total      int
	}{
		{[]int{10, 10, 10}, 10, 25, 2, 20},  // up to the limit
		{[]int{10, 7, 10}, 10, 100, 2, 17},  // a short frame ends the group
		{[]int{100, 10}, 100, 50, 1, 100},   // a large frame goes alone
		{[]int{10, 10, 10}, 10, 100, 3, 30}, // all of them
	} {
		if k, total := WriteGroup(c.lens, c.stride, c.limit); k != c.k || total != c.total {
			t.Errorf("WriteGroup(%v, %d, %d) = %d, %d; want %d, %d", c.lens, c.stride, c.limit, k, total, c.k, c.total)
		}
	}
	if n := WholeFrames([]int{10, 10, 10}, 25); n != 2 {
		t.Errorf("WholeFrames(25 of 30 bytes) = %d, want 2", n)
	}
	if n := WholeFrames([]int{10, 10}, 20); n != 2 {
		t.Errorf("WholeFrames(all) = %d, want 2", n)
	}
}
