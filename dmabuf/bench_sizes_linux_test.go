//go:build linux

package dmabuf

import (
	"strings"
	"testing"
)

// TestBenchSizeGivenTwice: a size given twice is refused before anything
// runs: the table has a column per size and showed the first run's
// figures in both.
func TestBenchSizeGivenTwice(t *testing.T) {
	rep, err := Bench(t.Context(), BenchConfig{Sizes: []int64{1 << 20, 4096, 1 << 20}})
	if err == nil || rep != nil || !strings.Contains(err.Error(), "size 1048576 is given twice: give each size once") {
		t.Errorf("Bench: %v, %v", rep, err)
	}
}
