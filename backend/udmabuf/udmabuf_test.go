//go:build linux

package udmabuf

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/dmabuf"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/peer/peertest"
)

func TestMain(m *testing.M) { peertest.Main(m) }

// standIn makes a stand-in u-dma-buf device: a sysfs directory with the
// driver's attributes (attrs override them; "@null" makes one a link to
// /dev/null) and a regular file of size bytes as the node. The
// sender opens, maps and syncs it as it would the real one; the receiver
// child maps the descriptor it is passed.
func standIn(t testing.TB, size int, attrs map[string]string) backend.DeviceOptions {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "sys/class/u-dma-buf/udmabuf0")
	os.MkdirAll(dir, 0o755)
	os.MkdirAll(filepath.Join(root, "dev"), 0o755)
	base := map[string]string{"driver_version": "5.5.0", "size": strconv.Itoa(size), "phys_addr": "0x0000000040000000",
		"sync_mode": "1", "sync_offset": "0x0", "sync_size": "0", "sync_direction": "0", "sync_owner": "0",
		"sync_for_cpu": "0", "sync_for_device": "0", "dma_coherent": "0"}
	for k, v := range attrs {
		base[k] = v
	}
	for k, v := range base {
		if v == "@null" { // writes vanish, reads skip it (not a regular file)
			if err := os.Symlink("/dev/null", filepath.Join(dir, k)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	node := filepath.Join(root, "dev/udmabuf0")
	f, err := os.Create(node)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(int64(size))
	f.Close()
	return backend.DeviceOptions{Device: node, SysRoot: filepath.Join(root, "sys"), DevRoot: filepath.Join(root, "dev")}
}

func writes(t testing.TB, d backend.DeviceOptions, attr string) []string {
	b, err := os.ReadFile(filepath.Join(d.SysRoot, "class/u-dma-buf/udmabuf0", attr))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// Frames of every size go intact through the stand-in device between two
// processes, with manual sync (the mapping is cached, the device not
// coherent).
func TestFramesIntactStandIn(t *testing.T) {
	// The sync attributes write to /dev/null: several runs share the tree.
	d := standIn(t, 8<<20, map[string]string{"sync_for_cpu": "@null", "sync_for_device": "@null"})
	peertest.Matrix(t, "udmabuf", backend.Options{Device: d}, []peertest.Size{{Size: 64, Count: 20000}, {Size: 4096, Count: 3000}, {Size: 460800, Count: 40}, {Size: 1 << 20, Count: 20}})
	if got := writes(t, d, "sync_mode"); len(got) != 1 || got[0] != "1" {
		t.Errorf("sync_mode changed: %v", got)
	}
}

// Every batch is followed by one sync_for_device of its range, and the
// receiver's sync_for_cpu calls go to the attribute the sender passed.
func TestManualSyncPerBatchCounted(t *testing.T) {
	d := standIn(t, 1<<20, nil)
	s, err := peertest.OpenSender(context.Background(), "udmabuf", backend.Options{Device: d, MaxFrame: frame.PayloadHeaderLen + 4000, Batch: 16})
	if err != nil {
		t.Fatal(err)
	}
	const count = 1000
	sent, err := peertest.Send(s, 4000, count, 16, frame.VerifyOn)
	if err != nil || sent != count {
		t.Fatalf("sent %d: %v", sent, err)
	}
	info := s.Info()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r := peertest.Report(t, s.(backend.PeerReporter).PeerReport())
	peertest.CheckIntact(t, r, count, frame.PayloadHeaderLen+4000)
	batches, _ := strconv.Atoi(info.Details["batches"])
	calls, _ := strconv.Atoi(info.Details["sync_calls"])
	if batches < count/16 || calls != batches {
		t.Errorf("%d batches, %d sync calls: want one sync_for_device per batch", batches, calls)
	}
	dev := writes(t, d, "sync_for_device")
	if len(dev) != batches {
		t.Fatalf("sync_for_device saw %d writes, the sender counted %d batches", len(dev), batches)
	}
	stride, _ := strconv.Atoi(info.Details["slot_stride"])
	for i, w := range dev {
		v, _ := strconv.ParseUint(strings.TrimPrefix(w, "0x"), 16, 64)
		c, ok := dmabuf.DecodeSyncCommand(v)
		if !ok || c.Dir != dmabuf.ToDevice || c.Offset%uint64(stride) != 0 || c.Size%uint64(stride) != 0 || c.Offset+c.Size > 1<<20 {
			t.Errorf("write %d: %s = %+v", i, w, c)
		}
	}
	if cpu := writes(t, d, "sync_for_cpu"); len(cpu) == 0 {
		t.Error("the receiver made no sync_for_cpu call")
	}
	for _, k := range []string{"driver", "cache_mode", "phys_addr", "sync_calls_per_frame"} {
		if info.Details[k] == "" {
			t.Errorf("report lacks %s: %v", k, info.Details)
		}
	}
	if info.Details["phys_addr"] != "0x40000000" || info.Details["cache_mode"] != "cached" || info.Details["sync"] != "sysfs" {
		t.Errorf("details %v", info.Details)
	}
}

// O_SYNC with sync_mode 2 maps write-combine: no sync calls; the
// sync_mode is written for the run and restored after.
func TestSyncModeForTheRun(t *testing.T) {
	d := standIn(t, 1<<20, nil)
	d.Sync = true
	m := 2
	d.SyncMode = &m
	s, err := peertest.OpenSender(context.Background(), "udmabuf", backend.Options{Device: d, MaxFrame: frame.PayloadHeaderLen + 256, Batch: 8})
	if err != nil {
		t.Fatal(err)
	}
	if got := writes(t, d, "sync_mode"); got[0] != "2" {
		t.Errorf("sync_mode during the run: %v", got)
	}
	if _, err := peertest.Send(s, 256, 100, 8, frame.VerifyOn); err != nil {
		t.Fatal(err)
	}
	info := s.Info()
	s.Close()
	if info.Details["cache_mode"] != "write-combine" || info.Details["sync_calls"] != "0" || info.Details["o_sync"] != "true" || info.Details["sync_mode"] != "2" {
		t.Errorf("details %v", info.Details)
	}
	if got := writes(t, d, "sync_mode"); got[0] != "1" {
		t.Errorf("sync_mode after the run: %v, want 1 restored", got)
	}
}

func TestWorkersGetDisjointWindows(t *testing.T) {
	d := standIn(t, 1<<20, nil)
	reg, _ := backend.Lookup("udmabuf")
	inst, err := reg.Open(context.Background(), backend.Options{Device: d, MaxFrame: 4096, Workers: 3, Env: peertest.Env()})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	in := inst.(*instance)
	if in.window*3 > in.buf.Size || in.slots != 64 || in.stride != 4096 {
		t.Errorf("3 workers on 1 MiB: window %d, slots %d, stride %d", in.window, in.slots, in.stride)
	}
}

func TestErrors(t *testing.T) {
	reg, _ := backend.Lookup("udmabuf")
	bad := 9
	for _, c := range []struct {
		o    backend.Options
		want string
	}{
		{backend.Options{MaxFrame: 100}, "--device is required"},
		{backend.Options{MaxFrame: 100, Device: backend.DeviceOptions{Device: "/dev/udmabuf0", SyncMode: &bad}}, "give 0 … 7"},
	} {
		if err := reg.Check(c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check(%+v) = %v, want %q", c.o.Device, err, c.want)
		}
	}
	d := standIn(t, 64<<10, nil)
	if _, err := reg.Open(context.Background(), backend.Options{Device: d, MaxFrame: 40 << 10}); err == nil || !strings.Contains(err.Error(), "too small for 2 slots") {
		t.Errorf("small buffer: %v", err)
	}
	if _, err := reg.Open(context.Background(), backend.Options{Device: d, MaxFrame: 1000, Mem: backend.MemOptions{Slots: 3}}); err == nil || !strings.Contains(err.Error(), "power of two") {
		t.Errorf("--slots 3: %v", err)
	}
	d.Device = filepath.Join(d.DevRoot, "udmabuf5")
	if _, err := reg.Open(context.Background(), backend.Options{Device: d, MaxFrame: 1000}); err == nil || !strings.Contains(err.Error(), "modprobe u-dma-buf") {
		t.Errorf("no device: %v", err)
	}
}

func TestReceiverKilled(t *testing.T) {
	peertest.KilledReceiver(t, "udmabuf", backend.Options{Device: standIn(t, 1<<20, map[string]string{"sync_for_cpu": "@null", "sync_for_device": "@null"})})
}
