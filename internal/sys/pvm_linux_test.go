//go:build linux

package sys

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Many buffers of mixed sizes, one call, copied exactly (the process reads
// itself, which process_vm_readv allows).
func TestPVMBatchMixedSizes(t *testing.T) {
	sizes := []int{1, 4095, 4097, 100000, 7}
	b := NewPVMBatch(len(sizes))
	var locals [][]byte
	var remotes []uintptr
	var srcs [][]byte
	for i, n := range sizes {
		src := bytes.Repeat([]byte{byte('a' + i)}, n)
		srcs = append(srcs, src)
		locals = append(locals, make([]byte, n))
		remotes = append(remotes, AddrOf(src))
	}
	if err := b.Transfer(os.Getpid(), false, locals, remotes); err != nil {
		t.Fatal(err)
	}
	for i := range sizes {
		if !bytes.Equal(locals[i], srcs[i]) {
			t.Fatalf("buffer %d not copied", i)
		}
	}
	if b.Calls != 1 {
		t.Errorf("%d calls, want 1", b.Calls)
	}
}

// A remote range with an unmapped page in the middle: the kernel copies up
// to the hole and stops (a partial transfer); Transfer resumes from the
// exact byte, then reports the fault instead of looping.
func TestPVMBatchPartialTransfer(t *testing.T) {
	const page = 4096
	m, err := unix.Mmap(-1, 0, 3*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	for i := range m {
		m[i] = byte(i % 251)
	}
	if _, _, e := unix.Syscall(unix.SYS_MUNMAP, AddrOf(m)+page, page, 0); e != 0 {
		t.Fatal(e)
	}
	local := make([]byte, 3*page)
	b := NewPVMBatch(1)
	err = b.Transfer(os.Getpid(), false, [][]byte{local}, []uintptr{AddrOf(m)})
	if err == nil {
		t.Fatal("transfer over an unmapped page succeeded")
	}
	if !strings.Contains(err.Error(), "process_vm_readv") {
		t.Errorf("error %q does not name the call", err)
	}
	if !bytes.Equal(local[:page], m[:page]) {
		t.Fatal("the bytes before the hole were not copied")
	}
	if b.Calls < 2 {
		t.Errorf("%d calls: the partial transfer was not resumed", b.Calls)
	}
	t.Logf("%v after %d calls", err, b.Calls)
}
