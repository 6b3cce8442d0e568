package sysinfo

import (
	"os"
	"path/filepath"
	"testing"
)

// The NUMA node of the device behind an interface comes from its /sys/bus
// entry, which every namespace shares; names that would leave the tree,
// and missing or negative nodes, are unknown (-1).
func TestDeviceNUMANode(t *testing.T) {
	root := t.TempDir()
	for p, c := range map[string]string{
		"sys/bus/pci/devices/0000:00:03.0/numa_node": "1\n",
		"sys/bus/pci/devices/0000:00:04.0/numa_node": "-1\n",
	} {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fs := FS{Root: root}
	for _, c := range []struct {
		bus, dev string
		want     int
	}{
		{"pci", "0000:00:03.0", 1},
		{"pci", "0000:00:04.0", -1},
		{"pci", "0000:00:05.0", -1},
		{"pci", "../../../etc", -1},
		{"..", "x", -1},
		{"", "", -1},
	} {
		if got := fs.DeviceNUMANode(c.bus, c.dev); got != c.want {
			t.Errorf("DeviceNUMANode(%q, %q) = %d, want %d", c.bus, c.dev, got, c.want)
		}
	}
}
