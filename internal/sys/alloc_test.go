//go:build linux

package sys

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAllocRefusalIsAClearError: a buffer the system cannot give is an
// *AllocError naming the size, the purpose and the fix, unwrapping to
// ENOMEM.
func TestAllocRefusalIsAClearError(t *testing.T) {
	_, err := Alloc(1<<46, "the test buffer") // 64 TiB
	var ae *AllocError
	if !errors.As(err, &ae) || !errors.Is(err, unix.ENOMEM) || ae.Bytes != 1<<46 {
		t.Fatalf("err %v", err)
	}
	for _, want := range []string{"cannot allocate 70368744177664 bytes (64.0 TiB) for the test buffer", "ulimit -v"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	m, err := Alloc(1<<20, "a small buffer")
	if err != nil || len(m.Bytes()) != 1<<20 {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil || m.Close() != nil {
		t.Fatal("Close is not idempotent")
	}
}
