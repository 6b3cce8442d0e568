//go:build linux

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/dmabuf"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/internal/testbed"
	"github.com/wpg-dev/wpg/internal/testbed/vm"
	"github.com/wpg-dev/wpg/recv"
)

// The fixture trees of package dmabuf: a u-dma-buf v5.5.0 machine with the
// mainline driver, and one with the old udmabuf class.
const (
	fixtureV5  = "../dmabuf/testdata/v5"
	fixtureOld = "../dmabuf/testdata/old"
)

func TestDmabufInfoFixtures(t *testing.T) {
	out, errs, code := run(t, "", "dmabuf", "info", "--json", "--sys-root", fixtureV5+"/sys", "--dev-root", fixtureV5+"/dev")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var inv dmabuf.Inventory
	if err := json.Unmarshal([]byte(out), &inv); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(inv.Devices) != 2 || inv.Devices[0].Attributes["ioctl_version"] != "2" || *inv.Devices[1].SyncOffset != 0x1000 ||
		!inv.Mainline.Present || *inv.Mainline.SizeLimitMB != 64 || *inv.Mainline.ListLimit != 1024 || len(inv.Heaps) != 1 {
		t.Errorf("inventory %s", out)
	}
	out, _, code = run(t, "", "dmabuf", "info", "udmabuf0", "--sys-root", fixtureOld+"/sys", "--dev-root", fixtureOld+"/dev")
	for _, want := range []string{"(udmabuf, ", "phys_addr 0x1e900000", "driver_version   1.4.8", "sync_mode 1 (with O_SYNC: non-cached)"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("old class (exit %d): output lacks %q:\n%s", code, want, out)
		}
	}
	_, errs, code = run(t, "", "dmabuf", "info", "/dev/udmabuf7", "--sys-root", fixtureOld+"/sys", "--dev-root", fixtureOld+"/dev")
	if code != 1 || !strings.Contains(errs, "modprobe u-dma-buf") || !strings.Contains(errs, "this machine has: "+fixtureOld+"/dev/udmabuf0") {
		t.Errorf("unknown device: exit %d: %s", code, errs)
	}
}

// The reference rows of the bench run anywhere.
func TestDmabufBenchReference(t *testing.T) {
	out, errs, code := run(t, "", "dmabuf", "bench", "--sizes", "64KiB,256KiB")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"program", "O_SYNC", "sync_mode", "64KiB", "256KiB", "check_buf  memfd", "clear_buf  memfd", "MB/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	_, errs, code = run(t, "", "dmabuf", "bench", "--sync-modes", "8")
	if code != 2 || !strings.Contains(errs, "give 0 … 7") {
		t.Errorf("--sync-modes 8: exit %d: %s", code, errs)
	}
}

func TestDmabufSendErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--backend", "udmabuf"}, 2, "--device is required"},
		{[]string{"--backend", "udmabuf", "--device", "/dev/udmabuf0", "--sync-mode", "9"}, 2, "give 0 … 7"},
		{[]string{"--backend", "shm", "--sync"}, 2, "applies to backend udmabuf"},
		{[]string{"--backend", "udmabuf", "--device", "/nonexistent/udmabuf3"}, 1, "modprobe u-dma-buf"},
	} {
		_, errs, code := run(t, "", append([]string{"send", "--count", "10"}, c.args...)...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("wpg send %v: exit %d, %q; want exit %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
}

// TestDmabufVM boots Debian's 6.12 kernel (CONFIG_UDMABUF=y) under QEMU
// with the static wpg binary and this package's test binary, whose
// TestDmabufGuest* tests run inside: send/recv through the real mainline
// /dev/udmabuf, dmabuf info and bench, and the driver's refusals. One
// boot for all of them.
func TestDmabufVM(t *testing.T) {
	if testbed.InGuest() {
		t.Skip("the host half")
	}
	qemu := testbed.QEMU(t)
	k := testbed.Kernel(t, testbed.KernelRelease)
	wpg := testbed.BuildStatic(t, "./cmd/wpg", false)
	self := testbed.BuildStatic(t, "./e2e", true)
	var console bytes.Buffer
	m := vm.Machine{
		Kernel: k, QEMU: qemu, Init: testbed.GuestInit(t), MemoryMiB: 768,
		Files: []vm.File{{Host: wpg, Guest: "/bin/wpg"}},
		Programs: []vm.Program{{Name: "e2e", Path: self, Args: []string{"-test.v", "-test.run", "^TestDmabufGuest", "-test.timeout", "5m"},
			Env: []string{"WPG_VM_WPG=/bin/wpg"}}},
		Timeout: 8 * time.Minute,
		Console: &console,
	}
	res, err := m.Run(context.Background())
	for _, d := range res.EarlyDeathsOrNil() {
		t.Logf("a boot's kernel died before the init's first line; booted again. Its console tail:\n%s", d)
	}
	if path := os.Getenv("WPG_VM_CONSOLE"); path != "" {
		os.WriteFile(path, console.Bytes(), 0o644) // for docs/dmabuf.md
	}
	if err != nil {
		t.Fatal(err)
	}
	p := res.Program("e2e")
	if !p.Passed() {
		t.Fatalf("guest tests (exit %d):\n%s", p.ExitCode, p.Output)
	}
	want := map[string]bool{"TestDmabufGuestSendRecv": false, "TestDmabufGuestInfo": false, "TestDmabufGuestBench": false, "TestDmabufGuestErrors": false}
	for _, tr := range p.Tests {
		if _, ok := want[tr.Name]; ok && tr.Outcome == "PASS" {
			want[tr.Name] = true
		}
	}
	for name, passed := range want {
		if !passed {
			t.Errorf("%s did not pass in the guest:\n%s", name, p.Output)
		}
	}
	t.Logf("one boot, %d guest tests, %v", len(p.Tests), res.Wall.Round(time.Millisecond))
}

// guestWpg is the wpg binary inside the VM, or a skip on the host.
func guestWpg(t *testing.T) string {
	t.Helper()
	if !testbed.InGuest() {
		t.Skip("runs inside the VM that TestDmabufVM boots")
	}
	return os.Getenv("WPG_VM_WPG")
}

// 10,000 frames of 4 KiB and of 1 MiB from `wpg send` through the mainline
// /dev/udmabuf to an independently started `wpg recv`, every one verified.
func TestDmabufGuestSendRecv(t *testing.T) {
	wpg := guestWpg(t)
	for _, size := range []int{4096, 1 << 20} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			const count = 10000
			sock := filepath.Join(t.TempDir(), "rx.sock")
			rx := exec.Command(wpg, "recv", "--backend", "udmabuf", "--listen", sock, "--expect", strconv.Itoa(count), "--json")
			var rout, rerr bytes.Buffer
			rx.Stdout, rx.Stderr = &rout, &rerr
			if err := rx.Start(); err != nil {
				t.Fatal(err)
			}
			tx := exec.Command(wpg, "send", "--backend", "udmabuf", "--device", "/dev/udmabuf", "--connect", sock,
				"--size", strconv.Itoa(size), "--count", strconv.Itoa(count))
			out, err := tx.CombinedOutput()
			fmt.Printf("$ wpg send --backend udmabuf --device /dev/udmabuf --connect %s --size %d --count %d\n%s", sock, size, count, out)
			if err != nil {
				rx.Process.Kill()
				t.Fatalf("wpg send: %v", err)
			}
			if err := rx.Wait(); err != nil {
				t.Fatalf("wpg recv: %v\n%s", err, rerr.String())
			}
			var r recv.Result
			if err := json.Unmarshal(rout.Bytes(), &r); err != nil {
				t.Fatalf("recv report: %v\n%s", err, rout.String())
			}
			intact(t, &r, count, 32+size)
			for _, want := range []string{"mainline udmabuf", "dma-buf", "sync_calls_per_frame"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("send report lacks %q", want)
				}
			}
			fmt.Printf("receiver: %d frames intact, %d bytes, sync via %s, %s sync calls per frame\n",
				r.Frames, r.Bytes, r.Backend.Details["sync"], r.Backend.Details["sync_calls_per_frame"])
		})
	}
}

func TestDmabufGuestInfo(t *testing.T) {
	wpg := guestWpg(t)
	out, err := exec.Command(wpg, "dmabuf", "info").CombinedOutput()
	fmt.Printf("$ wpg dmabuf info\n%s", out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mainline udmabuf: /dev/udmabuf (crw-------)", "size_limit_mb 64", "list_limit 1024", "system (/dev/dma_heap/system)"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("info lacks %q", want)
		}
	}
}

func TestDmabufGuestBench(t *testing.T) {
	wpg := guestWpg(t)
	out, err := exec.Command(wpg, "dmabuf", "bench", "/dev/udmabuf", "--sizes", "256KiB,1MiB").CombinedOutput()
	fmt.Printf("$ wpg dmabuf bench /dev/udmabuf --sizes 256KiB,1MiB\n%s", out)
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "/dev/udmabuf") && strings.Count(l, "MB/s") == 2 {
			rows++
		}
	}
	if rows != 4 || !strings.Contains(string(out), "dma-buf") {
		t.Errorf("want 4 mainline rows (2 programs × no sync, dma-buf sync), got %d", rows)
	}
	// wpg bench starts its own receiver on the same buffer.
	out, err = exec.Command(wpg, "bench", "--backend", "udmabuf", "--device", "/dev/udmabuf", "--size", "4KiB", "--duration", "1s").CombinedOutput()
	fmt.Printf("$ wpg bench --backend udmabuf --device /dev/udmabuf --size 4KiB --duration 1s\n%s", out)
	if err != nil || !strings.Contains(string(out), "mainline udmabuf") {
		t.Errorf("wpg bench --backend udmabuf: %v", err)
	}
}

// The mainline driver's refusals, each with the fix.
func TestDmabufGuestErrors(t *testing.T) {
	wpg := guestWpg(t)
	// 128 slots of 1 MiB frames: over size_limit_mb 64.
	out, err := exec.Command(wpg, "send", "--backend", "udmabuf", "--device", "/dev/udmabuf", "--size", "1MiB", "--slots", "128", "--count", "1").CombinedOutput()
	fmt.Printf("$ wpg send --backend udmabuf --device /dev/udmabuf --size 1MiB --slots 128\n%s", out)
	if err == nil || !strings.Contains(string(out), "size_limit_mb (64 MiB)") || !strings.Contains(string(out), "udmabuf.size_limit_mb=N") {
		t.Errorf("over the limit: %v", err)
	}
	// The fix the message names works: raise size_limit_mb (two writes
	// through one open descriptor, as dmabuf writes sync_for_device: sysfs
	// takes each write(2) as a store whatever the file position).
	lim, err := os.OpenFile("/sys/module/udmabuf/parameters/size_limit_mb", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"100\n", "130\n"} {
		if _, err := lim.WriteString(v); err != nil {
			t.Fatalf("write %q to size_limit_mb: %v", v, err)
		}
	}
	lim.Close()
	raised, err := exec.Command(wpg, "send", "--backend", "udmabuf", "--device", "/dev/udmabuf", "--size", "1MiB", "--slots", "128", "--count", "200").CombinedOutput()
	if b, _ := os.ReadFile("/sys/module/udmabuf/parameters/size_limit_mb"); strings.TrimSpace(string(b)) != "130" || err != nil {
		t.Errorf("after raising size_limit_mb to 130 (it reads %q): %v\n%s", b, err, raised)
	}
	os.WriteFile("/sys/module/udmabuf/parameters/size_limit_mb", []byte("64\n"), 0)
	// The kernel refuses a memfd with the wrong seals: no F_SEAL_SHRINK, or F_SEAL_WRITE.
	for _, seals := range []int{sys.SealGrow, sys.SealShrink | sys.SealWrite, sys.SealShrink | sys.SealFutureWrite} {
		_, err := dmabuf.Open(dmabuf.Options{Device: "/dev/udmabuf", Size: 1 << 20, Seals: seals})
		fmt.Printf("seals %#x: %v\n", seals, err)
		if err == nil || !strings.Contains(err.Error(), "udmabuf needs F_SEAL_SHRINK and refuses F_SEAL_WRITE") {
			t.Errorf("seals %#x: %v", seals, err)
		}
	}
	// Not root: the node is root-only (crw-------).
	cmd := exec.Command(wpg, "send", "--backend", "udmabuf", "--device", "/dev/udmabuf", "--count", "1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err = cmd.CombinedOutput()
	fmt.Printf("$ (as uid 65534) wpg send --backend udmabuf --device /dev/udmabuf\n%s", out)
	if err == nil || !strings.Contains(string(out), "udev rule") {
		t.Errorf("no permission: %v", err)
	}
	// No such device.
	out, err = exec.Command(wpg, "send", "--backend", "udmabuf", "--device", "/dev/udmabuf0", "--count", "1").CombinedOutput()
	fmt.Printf("$ wpg send --backend udmabuf --device /dev/udmabuf0\n%s", out)
	if err == nil || !strings.Contains(string(out), "modprobe u-dma-buf") {
		t.Errorf("no device: %v", err)
	}
}
