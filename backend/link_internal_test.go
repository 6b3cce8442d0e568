package backend

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/wpg-dev/wpg/sysinfo"
)

// writeFiles writes path → content below root.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// /sys is taken for an interface only when it shows that very one: the
// same ifindex and address. A namespace entered with setns sees the /sys
// of another, where a device of the same name may be someone else's.
func TestSysShows(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"sys/class/net/veth0/ifindex": "7\n",
		"sys/class/net/veth0/address": "02:00:00:00:00:01\n",
		"sys/class/net/lo/ifindex":    "1\n",
		"sys/class/net/lo/address":    "00:00:00:00:00:00\n",
	})
	fs := sysinfo.FS{Root: root}
	mac := net.HardwareAddr{2, 0, 0, 0, 0, 1}
	for _, c := range []struct {
		name string
		ifc  net.Interface
		want bool
	}{
		{"same", net.Interface{Name: "veth0", Index: 7, HardwareAddr: mac}, true},
		{"another ifindex", net.Interface{Name: "veth0", Index: 8, HardwareAddr: mac}, false},
		{"another address", net.Interface{Name: "veth0", Index: 7, HardwareAddr: net.HardwareAddr{2, 0, 0, 0, 0, 2}}, false},
		{"not in /sys", net.Interface{Name: "veth1", Index: 9, HardwareAddr: mac}, false},
		{"no address (lo)", net.Interface{Name: "lo", Index: 1}, true},
	} {
		d, err := fs.Interface(c.ifc.Name)
		if got := err == nil && sysShows(d, &c.ifc); got != c.want {
			t.Errorf("%s: sysShows = %v, want %v", c.name, got, c.want)
		}
	}
}
