package sys_test

import (
	"testing"

	"github.com/wpg-dev/wpg/internal/sys"
)

func TestAddrOrdersBytesOfOneSlice(t *testing.T) {
	b := make([]byte, 64)
	if a, c := sys.Addr(&b[0]), sys.Addr(&b[63]); c-a != 63 {
		t.Fatalf("Addr(&b[63]) - Addr(&b[0]) = %d, want 63", c-a)
	}
}
