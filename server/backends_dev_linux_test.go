package server

import (
	"strings"
	"testing"

	_ "github.com/wpg-dev/wpg/backend/udmabuf"
)

// TestUdmabufNeedsADevice: udmabuf is runnable only where a DMA buffer
// device exists (/dev/udmabuf or /dev/udmabufN); without one the backends
// list and the host page said "yes" and a job failed at its open.
func TestUdmabufNeedsADevice(t *testing.T) {
	old := globDevices
	defer func() { globDevices = old }()
	find := func(ts *testServer) BackendInfo {
		for _, b := range ts.s.Backends() {
			if b.Name == "udmabuf" {
				return b
			}
		}
		t.Fatal("no udmabuf backend in this build")
		return BackendInfo{}
	}
	ts := newTest(t, Options{})
	globDevices = func(string) ([]string, error) { return nil, nil }
	if b := find(ts); b.Runnable || !strings.Contains(b.WhyNot, "needs a DMA buffer device: /dev/udmabuf") || !strings.Contains(b.WhyNot, "wpg dmabuf info") {
		t.Errorf("without a device: %+v", b)
	}
	var asked []string
	globDevices = func(p string) ([]string, error) { asked = append(asked, p); return []string{"/dev/udmabuf0"}, nil }
	if b := find(ts); !b.Runnable || b.WhyNot != "" || !strings.Contains(strings.Join(asked, " "), "/dev/udmabuf*") {
		t.Errorf("with /dev/udmabuf0: %+v (patterns asked: %v)", b, asked)
	}
}
