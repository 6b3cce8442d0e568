package job

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/sysinfo"
)

// TestLinkSpeed: the speed of a NIC is read from /sys; an interface that
// reports none (-1, as lo and a link that is down do) is an error that
// names the file and its content.
func TestLinkSpeed(t *testing.T) {
	root := t.TempDir()
	for name, speed := range map[string]string{"eth9": "25000\n", "lo9": "-1\n"} {
		dir := filepath.Join(root, "sys/class/net", name)
		if err := os.MkdirAll(filepath.Join(dir, "device"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "speed"), []byte(speed), 0o644)
		os.WriteFile(filepath.Join(dir, "mtu"), []byte("1500\n"), 0o644)
	}
	fs := sysinfo.FS{Root: root}
	if mbps, nominal, err := linkSpeed(fs, "eth9"); err != nil || mbps != 25000 || nominal {
		t.Errorf("eth9: %d, %v", mbps, err)
	}
	_, _, err := linkSpeed(fs, "lo9")
	if err == nil || !strings.Contains(err.Error(), "/sys/class/net/lo9/speed: -1") || !strings.Contains(err.Error(), "reports no link speed") {
		t.Errorf("lo9: %v", err)
	}
	if _, _, err := linkSpeed(fs, "nope0"); err == nil {
		t.Error("a missing interface has a speed")
	}
}
