package vm_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/testbed"
	"github.com/wpg-dev/wpg/internal/testbed/vm"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbed.RemoveBuilds()
	os.Exit(code)
}

// readCPIO is a minimal newc reader: what the kernel unpacks.
func readCPIO(t *testing.T, b []byte) map[string]vm.Entry {
	t.Helper()
	out := map[string]vm.Entry{}
	for off := 0; ; {
		if off%4 != 0 || len(b)-off < 110 || string(b[off:off+6]) != "070701" {
			t.Fatalf("bad header at %d", off)
		}
		field := func(i int) uint32 {
			v, err := strconv.ParseUint(string(b[off+6+8*i:off+14+8*i]), 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			return uint32(v)
		}
		mode, size, rmaj, rmin, nsize := field(1), int(field(6)), field(9), field(10), int(field(11))
		name := string(b[off+110 : off+110+nsize-1])
		off += 110 + nsize
		off = (off + 3) &^ 3
		data := b[off : off+size]
		off += size
		off = (off + 3) &^ 3
		if name == "TRAILER!!!" {
			return out
		}
		e := vm.Entry{Path: "/" + name, Mode: mode & 0o7777, Dir: mode&0o170000 == 0o040000, Chr: mode&0o170000 == 0o020000, Major: rmaj, Minor: rmin}
		if mode&0o170000 == 0o120000 {
			e.Link = string(data)
		} else if !e.Dir {
			e.Data = append([]byte(nil), data...)
		}
		out[e.Path] = e
	}
}

func TestCPIOLayout(t *testing.T) {
	var buf bytes.Buffer
	err := vm.WriteCPIO(&buf, []vm.Entry{
		{Path: "/bin/x", Mode: 0o755, Data: []byte("hello")},
		{Path: "/dev/console", Mode: 0o600, Chr: true, Major: 5, Minor: 1},
		{Path: "/lib/a/b/c.ko", Mode: 0o644, Data: bytes.Repeat([]byte{7}, 1001)},
		{Path: "/sbin/init", Link: "/bin/x"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := readCPIO(t, buf.Bytes())
	for _, dir := range []string{"/bin", "/dev", "/lib", "/lib/a", "/lib/a/b", "/sbin"} {
		if !got[dir].Dir {
			t.Errorf("parent %s missing or not a directory", dir)
		}
	}
	if string(got["/bin/x"].Data) != "hello" || got["/bin/x"].Mode != 0o755 {
		t.Errorf("/bin/x = %+v", got["/bin/x"])
	}
	if c := got["/dev/console"]; !c.Chr || c.Major != 5 || c.Minor != 1 {
		t.Errorf("/dev/console = %+v", c)
	}
	if len(got["/lib/a/b/c.ko"].Data) != 1001 || got["/sbin/init"].Link != "/bin/x" {
		t.Error("body or link lost")
	}
	if err := vm.WriteCPIO(&bytes.Buffer{}, []vm.Entry{{Path: "/a", Data: []byte("x")}, {Path: "/a"}}); err == nil {
		t.Error("a duplicate path was accepted")
	}
}

func TestParseConsole(t *testing.T) {
	console := "[    0.000] Linux version 6.12\r\n\nWPGVM: MODULE veth\n\nWPGVM: BEGIN e2e\n=== RUN   TestA\n--- PASS: TestA (0.50s)\n" +
		"    --- SKIP: TestA/sub (0.00s)\n--- FAIL: TestB (1.25s)\nFAIL\n\nWPGVM: END e2e rc=1\n\nWPGVM: BEGIN hung\npartial\n\nWPGVM: DONE\n"
	r := vm.Parse(console)
	if !r.Done || len(r.Modules) != 1 || r.Modules[0] != "veth" || len(r.Programs) != 2 {
		t.Fatalf("%+v", r)
	}
	p := r.Program("e2e")
	if !p.Finished || p.ExitCode != 1 || p.Passed() || len(p.Tests) != 3 {
		t.Fatalf("e2e: %+v", p)
	}
	if p.Tests[0] != (vm.TestResult{Name: "TestA", Outcome: "PASS", Seconds: 0.5}) || p.Tests[1].Name != "TestA/sub" || p.Tests[2].Outcome != "FAIL" {
		t.Errorf("tests %+v", p.Tests)
	}
	if h := r.Program("hung"); h.Finished || !strings.Contains(h.Output, "partial") {
		t.Errorf("hung: %+v", h)
	}
}

func TestModuleDeps(t *testing.T) {
	root := t.TempDir()
	mods := filepath.Join(root, "lib/modules/9.9")
	os.MkdirAll(filepath.Join(root, "boot"), 0o755)
	os.MkdirAll(mods, 0o755)
	os.WriteFile(filepath.Join(root, "boot/vmlinuz-9.9"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(mods, "modules.dep"), []byte(
		"kernel/net/sched/sch_etf.ko.xz:\nkernel/drivers/net/veth.ko.xz: kernel/net/core/page-pool.ko.xz kernel/lib/ptr_ring.ko.xz\nkernel/lib/ptr_ring.ko.xz:\nkernel/net/core/page-pool.ko.xz: kernel/lib/ptr_ring.ko.xz\n"), 0o644)
	k, err := vm.LoadKernel(root, "9.9")
	if err != nil {
		t.Fatal(err)
	}
	got, err := k.ModuleDeps([]string{"veth", "sch-etf", "ptr_ring"})
	want := "kernel/lib/ptr_ring.ko.xz kernel/net/core/page-pool.ko.xz kernel/drivers/net/veth.ko.xz kernel/net/sched/sch_etf.ko.xz"
	if err != nil || strings.Join(got, " ") != want {
		t.Errorf("deps = %v, %v; want %s", got, err, want)
	}
	os.Remove(filepath.Join(mods, "modules.dep"))
	os.MkdirAll(filepath.Join(mods, "kernel/x"), 0o755)
	os.WriteFile(filepath.Join(mods, "kernel/x/a.ko"), []byte("\x7fELF\x00license=GPL\x00depends=b,c-d\x00vermagic=9.9\x00"), 0o644)
	os.WriteFile(filepath.Join(mods, "kernel/x/b.ko"), []byte("\x00depends=\x00"), 0o644)
	os.WriteFile(filepath.Join(mods, "kernel/x/c-d.ko"), []byte("\x00depends=b\x00"), 0o644)
	k, _ = vm.LoadKernel(root, "9.9")
	if got, err := k.ModuleDeps([]string{"a"}); err != nil || strings.Join(got, " ") != "kernel/x/b.ko kernel/x/c-d.ko kernel/x/a.ko" {
		t.Errorf("modinfo deps = %v, %v", got, err)
	}
	if _, err := k.ModuleDeps([]string{"nosuch"}); err == nil || !strings.Contains(err.Error(), `no module "nosuch"`) {
		t.Errorf("unknown module: %v", err)
	}
	if _, err := vm.LoadKernel(root, "1.0"); err == nil || !strings.Contains(err.Error(), "fetch-kernel.sh") {
		t.Errorf("missing kernel: %v", err)
	}
}

// TestBoot boots the kernel with this test binary as the program and veth
// loaded, and reads the guest half's result from the console.
func TestBoot(t *testing.T) {
	if testbed.InGuest() {
		t.Skip("the host half")
	}
	qemu := testbed.QEMU(t)
	k := testbed.Kernel(t, testbed.KernelRelease)
	self := testbed.BuildStatic(t, "./internal/testbed/vm", true)
	m := vm.Machine{
		Kernel: k, QEMU: qemu, Init: testbed.GuestInit(t), Modules: []string{"veth"},
		Programs: []vm.Program{{Name: "vmtest", Path: self, Args: []string{"-test.v", "-test.run", "^TestGuestSide$"}, Env: []string{"WPG_VM_RELEASE=" + k.Release}}},
		Timeout:  90 * time.Second,
	}
	res, err := m.Run(context.Background())
	for _, d := range res.EarlyDeathsOrNil() {
		t.Logf("a boot's kernel died before the init's first line; booted again. Its console tail:\n%s", d)
	}
	if err != nil {
		t.Fatal(err)
	}
	p := res.Program("vmtest")
	if !p.Passed() || len(p.Tests) != 1 || p.Tests[0].Outcome != "PASS" {
		t.Fatalf("guest half: %+v\nconsole:\n%s", p, res.Console)
	}
	if strings.Join(res.Modules, ",") == "" || res.Modules[len(res.Modules)-1] != "veth" {
		t.Errorf("modules loaded: %v", res.Modules)
	}
	t.Logf("boot and run took %v", res.Wall.Round(time.Millisecond))
}

// TestGuestSide is TestBoot's guest half: it runs in the VM, under the
// kernel asked for, with the module loaded.
func TestGuestSide(t *testing.T) {
	if !testbed.InGuest() {
		t.Skip("runs inside the VM that TestBoot boots")
	}
	v, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil || strings.TrimSpace(string(v)) != os.Getenv("WPG_VM_RELEASE") {
		t.Errorf("kernel %q, %v; want %s", v, err, os.Getenv("WPG_VM_RELEASE"))
	}
	if _, err := os.Stat("/sys/module/veth"); err != nil {
		t.Errorf("veth not loaded: %v", err)
	}
	if os.Getpid() == 1 {
		t.Error("the test runs as init")
	}
	if err := os.WriteFile(filepath.Join(t.TempDir(), "x"), []byte("x"), 0o644); err != nil {
		t.Errorf("no writable /tmp: %v", err)
	}
}
