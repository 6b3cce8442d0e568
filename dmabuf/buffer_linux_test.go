//go:build linux

package dmabuf

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// standIn copies the stand-in fixture (a u-dma-buf sysfs directory) into
// a temporary tree and makes a regular file of the device's size as its
// node, so Open, the mapping, the sysfs writes and the sync calls run on
// real files. It returns the tree and the node.
func standIn(t *testing.T) (FS, string) {
	t.Helper()
	root := t.TempDir()
	src := "testdata/standin"
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(root, strings.TrimPrefix(p, src))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	fsys := FS{Sys: filepath.Join(root, "sys"), Dev: filepath.Join(root, "dev")}
	os.MkdirAll(fsys.Dev, 0o755)
	node := filepath.Join(fsys.Dev, "udmabuf0")
	f, err := os.Create(node)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(1 << 20)
	f.Close()
	return fsys, node
}

func attr(t *testing.T, fsys FS, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fsys.Sys, "class/u-dma-buf/udmabuf0", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// fdFlags reads the open flags of fd from /proc/self/fdinfo.
func fdFlags(t *testing.T, fd int) uint64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", fd))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no flags in fdinfo")
	return 0
}

const oSync = 0o4010000

// Each sync_mode is written before the open and the old one restored on
// Close; O_SYNC reaches the open file; the cache mode follows the driver's
// table; a non-coherent cached buffer gets manual sync, an uncached one
// none.
func TestStandInSyncModeWriteAndRestore(t *testing.T) {
	fsys, node := standIn(t)
	for m := 0; m <= MaxSyncMode; m++ {
		for _, osync := range []bool{false, true} {
			b, err := Open(Options{Device: node, FS: fsys, Sync: osync, SyncMode: &m})
			if err != nil {
				t.Fatal(err)
			}
			if got := attr(t, fsys, "sync_mode"); got != strconv.Itoa(m) {
				t.Errorf("sync_mode %d, O_SYNC %v: attribute holds %s while open", m, osync, got)
			}
			if got := fdFlags(t, b.Fd())&oSync == oSync; got != osync {
				t.Errorf("sync_mode %d: O_SYNC on the open file = %v, want %v", m, got, osync)
			}
			want := CacheMode(m, osync)
			if b.CacheMode != want || *b.SyncMode != m || b.Size != 1<<20 || *b.PhysAddr != 0x1e900000 || b.Driver != DriverUDmaBuf {
				t.Errorf("sync_mode %d, O_SYNC %v: %+v", m, osync, b)
			}
			wantVia := SyncNone
			if want == CacheCached {
				wantVia = SyncSysfs
			}
			if b.SyncVia != wantVia {
				t.Errorf("sync_mode %d, O_SYNC %v (%s): sync via %s, want %s", m, osync, want, b.SyncVia, wantVia)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if got := attr(t, fsys, "sync_mode"); got != "1" {
				t.Errorf("sync_mode %d: restored to %s, want the old 1", m, got)
			}
			if err := b.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
		}
	}
	bad := 8
	if _, err := Open(Options{Device: node, FS: fsys, SyncMode: &bad}); !errors.Is(err, ErrSyncMode) || !strings.Contains(err.Error(), "give 0 … 7") {
		t.Errorf("sync_mode 8: %v", err)
	}
	if got := attr(t, fsys, "sync_mode"); got != "1" {
		t.Errorf("a refused sync_mode was written: %s", got)
	}
}

// Manual sync: one sync_for_device per written batch and one sync_for_cpu
// per read batch, each a packed command for the batch's range, counted
// by the buffer and seen by the attribute files.
func TestStandInManualSyncPerBatch(t *testing.T) {
	fsys, node := standIn(t)
	b, err := Open(Options{Device: node, FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	if b.SyncVia != SyncSysfs || b.CacheMode != CacheCached {
		t.Fatalf("not manual: %+v", b)
	}
	mem := b.Bytes()
	const batches, batch = 7, 4096
	for i := 0; i < batches; i++ {
		off := i * batch
		if err := b.BeginWrite(off, batch); err != nil {
			t.Fatal(err)
		}
		for k := range batch {
			mem[off+k] = byte(i)
		}
		if err := b.EndWrite(off, batch); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		if err := b.BeginRead(i*100, 100); err != nil {
			t.Fatal(err)
		}
		b.EndRead(i*100, 100)
	}
	if st := b.Stats(); st.ForDevice != batches || st.ForCPU != 3 || st.DmaBuf != 0 {
		t.Errorf("stats %+v, want %d for_device and 3 for_cpu", b.Stats(), batches)
	}
	if err := b.EndWrite(1<<20-8, 16); err == nil {
		t.Error("a range past the end was synced")
	}
	b.Close()
	lines := strings.Fields(attr(t, fsys, "sync_for_device"))
	if len(lines) != batches {
		t.Fatalf("sync_for_device saw %d writes, want %d: %q", len(lines), batches, lines)
	}
	for i, l := range lines {
		v, err := strconv.ParseUint(strings.TrimPrefix(l, "0x"), 16, 64)
		c, ok := DecodeSyncCommand(v)
		if err != nil || !ok || c.Offset != uint64(i*batch) || c.Size != batch || c.Dir != ToDevice {
			t.Errorf("write %d: %q = %+v", i, l, c)
		}
	}
	cpu := strings.Fields(attr(t, fsys, "sync_for_cpu"))
	if len(cpu) != 3 {
		t.Fatalf("sync_for_cpu saw %q", cpu)
	}
	if v, _ := strconv.ParseUint(strings.TrimPrefix(cpu[2], "0x"), 16, 64); v != 200<<32|112|uint64(FromDevice)<<2|1 {
		t.Errorf("third sync_for_cpu %s", cpu[2])
	}
	data, _ := os.ReadFile(node)
	if data[0] != 0 || data[batch] != 1 || data[6*batch+5] != 6 {
		t.Error("writes through the mapping did not reach the file")
	}
}

// A coherent device needs no sync calls; ioctl_version selects ioctls.
func TestStandInCoherentAndIoctl(t *testing.T) {
	fsys, node := standIn(t)
	dir := filepath.Join(fsys.Sys, "class/u-dma-buf/udmabuf0")
	os.WriteFile(filepath.Join(dir, "dma_coherent"), []byte("1\n"), 0o644)
	b, err := Open(Options{Device: node, FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	if b.SyncVia != SyncNone || !b.Coherent {
		t.Errorf("coherent: %+v", b)
	}
	b.EndWrite(0, 4096)
	if b.Stats().Total() != 0 {
		t.Errorf("coherent buffer made sync calls: %+v", b.Stats())
	}
	b.Close()
	os.WriteFile(filepath.Join(dir, "dma_coherent"), []byte("0\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "ioctl_version"), []byte("2\n"), 0o644)
	b, err = Open(Options{Device: node, FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.SyncVia != SyncIoctl {
		t.Errorf("ioctl_version 2: sync via %s", b.SyncVia)
	}
	// A regular file answers the driver's ioctl with ENOTTY: the error says which.
	if err := b.EndWrite(0, 4096); err == nil || !strings.Contains(err.Error(), "U_DMA_BUF_IOCTL_SET_sync_for_device") {
		t.Errorf("ioctl on a stand-in: %v", err)
	}
}

func TestOpenErrorsSayWhatToDo(t *testing.T) {
	fsys, node := standIn(t)
	for _, c := range []struct {
		o    Options
		want []string
	}{
		{Options{Device: filepath.Join(fsys.Dev, "udmabuf7"), FS: fsys}, []string{"no such DMA buffer device", "modprobe u-dma-buf", "CONFIG_UDMABUF"}},
		{Options{Device: filepath.Join(fsys.Dev, "udmabuf"), FS: fsys}, []string{"no such DMA buffer device", "CONFIG_UDMABUF"}},
		{Options{Device: filepath.Join(fsys.Dev, "udmabuf"), FS: fsys, Sync: true}, []string{"u-dma-buf controls", "drop --sync"}},
		{Options{}, []string{"no device given"}},
	} {
		_, err := Open(c.o)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %v lacks %q", c.o, err, w)
			}
		}
	}
	if os.Geteuid() == 0 {
		return // root opens a 0000 file; the permission path needs a user
	}
	os.Chmod(node, 0)
	if _, err := Open(Options{Device: node, FS: fsys}); !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "udev rule") {
		t.Errorf("no permission: %v", err)
	}
}

// The bench runs on the stand-in: every mode, both programs, a sound
// buffer, and the manual rows count two sync calls per pass.
func TestBenchStandIn(t *testing.T) {
	fsys, node := standIn(t)
	rep, err := Bench(t.Context(), BenchConfig{Device: node, FS: fsys, Sizes: []int64{64 << 10, 2 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	// memfd, no O_SYNC, O_SYNC × 4, manual: 7 rows per program.
	if len(rep.Rows) != 14 || rep.Errors() != 0 {
		t.Fatalf("%d rows, %d errors", len(rep.Rows), rep.Errors())
	}
	for _, r := range rep.Rows {
		if r.Target == "memfd" {
			if len(r.Cells) != 2 {
				t.Errorf("memfd row has %d cells", len(r.Cells))
			}
			continue
		}
		if len(r.Cells) != 1 { // 2 MiB is over the 1 MiB stand-in
			t.Errorf("%s row has %d cells", r.Program, len(r.Cells))
		}
		want := uint64(0)
		if r.Sync == "manual" {
			want = uint64(2 * r.Passes)
		}
		if r.Cells[0].SyncCalls != want {
			t.Errorf("%s %s: %d sync calls, want %d", r.Program, r.Sync, r.Cells[0].SyncCalls, want)
		}
	}
	if attr(t, fsys, "sync_mode") != "1" {
		t.Error("bench left sync_mode changed")
	}
	if len(rep.Notes) != 1 {
		t.Errorf("notes %q", rep.Notes)
	}
	var sb strings.Builder
	rep.WriteTable(&sb)
	for _, w := range []string{"check_buf", "clear_buf", "O_SYNC", "sync_mode", "64KiB", "MB/s", "write-combine", "manual"} {
		if !strings.Contains(sb.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, sb.String())
		}
	}
}
