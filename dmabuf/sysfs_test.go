package dmabuf

import (
	"strings"
	"testing"
)

// Every attribute of a v5 u-dma-buf device and of the old udmabuf class
// parses from the formats the drivers print.
func TestInventoryFixtureV5(t *testing.T) {
	inv, err := FS{Sys: "testdata/v5/sys", Dev: "testdata/v5/dev"}.Inventory()
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Problems) != 0 {
		t.Fatalf("problems: %v", inv.Problems)
	}
	if len(inv.Devices) != 2 {
		t.Fatalf("%d devices, want 2", len(inv.Devices))
	}
	d := inv.Devices[0]
	checks := []struct {
		name      string
		got, want any
	}{
		{"name", d.Name, "udmabuf0"},
		{"class", d.Class, ClassUDmaBuf},
		{"node", d.Node, "testdata/v5/dev/udmabuf0"},
		{"driver_version", d.DriverVersion, "5.5.0"},
		{"size", d.Size, uint64(1 << 20)},
		{"phys_addr", *d.PhysAddr, uint64(0x1e900000)},
		{"sync_mode", *d.SyncMode, 1},
		{"sync_offset", *d.SyncOffset, uint64(0)},
		{"sync_size", *d.SyncSize, uint64(0)},
		{"sync_direction", *d.SyncDirection, 0},
		{"sync_owner", *d.SyncOwner, 0},
		{"sync_for_cpu", *d.SyncForCPU, uint64(0)},
		{"sync_for_device", *d.SyncForDevice, uint64(0)},
		{"dma_coherent", *d.DMACoherent, false},
		{"quirk_mmap_mode", *d.QuirkMmapMode, 3},
		{"ioctl_version", *d.IoctlVersion, 2},
		{"attributes (dev kept, uevent left out)", d.Attributes["dev"] + "|" + d.Attributes["uevent"], "248:0|"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	d1 := inv.Devices[1]
	if *d1.SyncOffset != 0x1000 || *d1.SyncSize != 8192 || *d1.SyncDirection != 1 || *d1.SyncOwner != 1 || !d1.Coherent() || *d1.SyncMode != 3 {
		t.Errorf("udmabuf1 = %+v", d1)
	}
	if !inv.Mainline.Present || *inv.Mainline.SizeLimitMB != 64 || *inv.Mainline.ListLimit != 1024 {
		t.Errorf("mainline = %+v", inv.Mainline)
	}
	if len(inv.Heaps) != 1 || inv.Heaps[0].Name != "system" {
		t.Errorf("heaps = %+v", inv.Heaps)
	}
}

func TestInventoryFixtureOldClass(t *testing.T) {
	inv, err := FS{Sys: "testdata/old/sys", Dev: "testdata/old/dev"}.Inventory()
	if err != nil || len(inv.Problems) != 0 {
		t.Fatal(err, inv.Problems)
	}
	if len(inv.Devices) != 1 {
		t.Fatalf("%d devices", len(inv.Devices))
	}
	d := inv.Devices[0]
	if d.Class != ClassOld || d.DriverVersion != "1.4.8" || *d.PhysAddr != 0x1e900000 || d.Size != 1<<20 || d.QuirkMmapMode != nil || d.IoctlVersion != nil {
		t.Errorf("old device = %+v", d)
	}
	if inv.Mainline.Present || inv.Mainline.SizeLimitMB != nil {
		t.Errorf("mainline should be absent: %+v", inv.Mainline)
	}
	if _, found, _ := (FS{Sys: "testdata/old/sys"}).Lookup("udmabuf0"); !found {
		t.Error("Lookup does not find the old class")
	}
}

func TestParseDeviceFormats(t *testing.T) {
	for _, c := range []struct {
		attr, v string
		check   func(Device) bool
	}{
		{"phys_addr", "1e900000", func(d Device) bool { return *d.PhysAddr == 0x1e900000 }}, // bare hex, as %x reads it
		{"phys_addr", "0x00000000fffff000", func(d Device) bool { return *d.PhysAddr == 0xfffff000 }},
		{"sync_offset", "0x10", func(d Device) bool { return *d.SyncOffset == 16 }},
		{"sync_offset", "10", func(d Device) bool { return *d.SyncOffset == 10 }}, // decimal, not octal
		{"sync_for_cpu", "18446744073709551615", func(d Device) bool { return *d.SyncForCPU == ^uint64(0) }},
	} {
		d, err := ParseDevice("x", ClassUDmaBuf, map[string]string{"size": "4096", c.attr: c.v})
		if err != nil || !c.check(d) {
			t.Errorf("%s %q: %+v, %v", c.attr, c.v, d, err)
		}
	}
}

func TestParseDeviceErrorsNameEveryAttribute(t *testing.T) {
	d, err := FS{Sys: "testdata/bad/sys"}.Device(ClassUDmaBuf, "udmabuf0")
	if err == nil {
		t.Fatal("bad attributes parsed")
	}
	for _, want := range []string{"testdata/bad/sys/class/u-dma-buf/udmabuf0", `size "1O48576"`, `phys_addr "0xZZ"`, `sync_mode "9"`, `dma_coherent "2"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if d.SyncMode != nil || d.DMACoherent != nil {
		t.Errorf("unparsed values were kept: %+v", d)
	}
	if _, err := (FS{Sys: "testdata/nosize/sys"}).Device(ClassUDmaBuf, "udmabuf0"); err == nil || !strings.Contains(err.Error(), "size: missing") {
		t.Errorf("no size: %v", err)
	}
}

func TestInventoryEmptyMachine(t *testing.T) {
	inv, err := FS{Sys: t.TempDir(), Dev: t.TempDir()}.Inventory()
	if err != nil || len(inv.Devices) != 0 || inv.Mainline.Present || len(inv.Heaps) != 0 {
		t.Fatalf("%+v, %v", inv, err)
	}
}
