//go:build linux

package sys

import (
	"errors"
	"os"
	"testing"
)

// An FD and a Mapping have one owner: a second Close does nothing, and a
// closed FD reports -1.
func TestFDAndMappingCloseOnce(t *testing.T) {
	fd, err := MemfdCreate("wpg-own-test", 8192)
	if err != nil {
		t.Fatal(err)
	}
	f := OwnFD(fd)
	m, err := MapFile(f.Int(), 8192, true, true, "test memfd")
	if err != nil {
		t.Fatal(err)
	}
	b := m.Bytes()
	b[0], b[8191] = 1, 2
	if m.Addr() == 0 || len(b) != 8192 {
		t.Fatalf("mapping at %#x, %d bytes", m.Addr(), len(b))
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil || m.Bytes() != nil {
		t.Fatalf("second Close: %v, bytes %v", err, m.Bytes() != nil)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil || f.Int() != -1 || f.Valid() {
		t.Fatalf("second Close: %v, fd %d", err, f.Int())
	}
	var zero FD
	if zero.Valid() || zero.Int() != -1 || zero.Close() != nil {
		t.Fatal("the zero FD owns a descriptor")
	}
}

// Lock either works or says it is the memlock limit (or a permission).
func TestMappingLock(t *testing.T) {
	m, err := MapAnonLazy(1<<16, false)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Lock(); err != nil && !errors.Is(err, ErrMemlock) && !errors.Is(err, os.ErrPermission) {
		t.Fatalf("Lock: %v, want nil or ErrMemlock", err)
	}
}
