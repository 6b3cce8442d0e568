package sysinfo

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestEnvironmentNUMA2(t *testing.T) {
	e, err := FS{Root: "testdata/numa2"}.Environment("ens3")
	if err != nil {
		t.Fatal(err)
	}
	ten := 10000
	want := Env{
		Kernel: "6.1.0-test", KernelV: "#1 SMP PREEMPT_DYNAMIC Debian 6.1.0",
		CPUModel: "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz", CPUs: 4, Cores: 4, Allowed: "1-2", NUMA: 2,
		Governor: "performance", ConstantTSC: true, NonstopTSC: true,
		PipeMaxSize: ptr(int64(1048576)), MemlockLimit: ptr(int64(8388608)),
		Interface: &Iface{Name: "ens3", Driver: "ixgbe", Operstate: "up", MTU: 9000, SpeedMbps: &ten,
			TXQueues: 2, RXQueues: 2, NUMANode: 1, TxQueueLen: 1000,
			XPS: map[string]string{"tx-0": "00000003", "tx-1": "0000000c"}, RPS: map[string]string{"rx-1": "00000004"}},
	}
	if !reflect.DeepEqual(e, want) {
		a, _ := json.MarshalIndent(e, "", " ")
		b, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("got\n%s\nwant\n%s", a, b)
	}
	lo, err := FS{Root: "testdata/numa2"}.Interface("lo")
	if err != nil || !lo.Virtual || lo.SpeedMbps != nil || lo.XPS != nil || lo.NUMANode != -1 || lo.MTU != 65536 {
		t.Fatalf("lo: %+v %v", lo, err)
	}
}

func TestEnvironmentVM(t *testing.T) {
	e, err := FS{Root: "testdata/vm"}.Environment("")
	if err != nil {
		t.Fatal(err)
	}
	if e.CPUs != 2 || e.Cores != 2 || e.NUMA != 1 || e.Governor != "" || e.ConstantTSC || e.PipeMaxSize != nil ||
		e.MemlockLimit == nil || *e.MemlockLimit != -1 || e.Interface != nil {
		t.Fatalf("vm: %+v", e)
	}
	b, _ := json.Marshal(e)
	if strings.Contains(string(b), "pipe_max_size") || strings.Contains(string(b), "governor") {
		t.Errorf("missing values must be omitted, not zero: %s", b)
	}
}

func TestUnknownInterface(t *testing.T) {
	_, err := FS{Root: "testdata/numa2"}.Environment("eth7")
	if !errors.Is(err, ErrNoInterface) || !strings.Contains(err.Error(), "ens3, lo") {
		t.Fatalf("err = %v", err)
	}
	for _, bad := range []string{"../x", "..", "a/b"} {
		if _, err := (FS{Root: "testdata/numa2"}).Interface(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseCPUList(t *testing.T) {
	got, err := ParseCPUList("0-2,5,7-8\n")
	if err != nil || !reflect.DeepEqual(got, []int{0, 1, 2, 5, 7, 8}) {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"a", "3-1", "1-x"} {
		if _, err := ParseCPUList(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestHost(t *testing.T) {
	e := Environment("lo")
	if e.CPUs < 1 || e.Kernel == "" || e.Interface == nil || e.Interface.Name != "lo" {
		t.Fatalf("host: %+v", e)
	}
}

func ptr[T any](v T) *T { return &v }

// TestTableWords: sizes read with their unit, a virtual interface's NUMA
// node and state are named, not "-1" and a bare "unknown".
func TestTableWords(t *testing.T) {
	pipe, lock := int64(1048576), int64(65536+512)
	e := Env{Kernel: "k", PipeMaxSize: &pipe, MemlockLimit: &lock, Interface: &Iface{Name: "lo", Virtual: true, Operstate: "unknown", NUMANode: -1}}
	var b bytes.Buffer
	e.WriteTable(&b)
	for _, w := range []string{"1048576 bytes (1 MiB)", "66048 bytes (64.5 KiB)", "lo (virtual), state unknown", "numa node    none"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, b.String())
		}
	}
}
