//go:build linux

package xpmem

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/peer/peertest"
)

func TestMain(m *testing.M) { peertest.Main(m) }

func TestRegistration(t *testing.T) {
	r, err := backend.Lookup("xpmem")
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != backend.KindLocal || !r.Payload || !r.NeedsPeer || r.Open == nil || !r.Receives {
		t.Errorf("registration %+v: want Kind local, Payload, NeedsPeer, sender and receiver", r)
	}
}

func TestLayout(t *testing.T) {
	pg := os.Getpagesize()
	for _, c := range []struct{ maxFrame, stride int }{{64, 64}, {100, 128}, {4096, 4096}, {460800, 462848}, {1 << 20, 1 << 20}} {
		if got := stride(c.maxFrame); got != c.stride {
			t.Errorf("stride(%d) = %d, want %d", c.maxFrame, got, c.stride)
		}
	}
	if n := slotsFor(64, 0); n != maxSlots {
		t.Errorf("64-byte frames: %d slots, want %d", n, maxSlots)
	}
	if n := slotsFor(1<<30, 0); n != 2 {
		t.Errorf("1 GiB frames: %d slots, want 2", n)
	}
	if n := slotsFor(460800, 0); n*stride(460800) > stagingBudget+stride(460800) || n < 4 {
		t.Errorf("460800-byte frames: %d slots", n)
	}
	if n := slotsFor(64, 7); n != 7 {
		t.Errorf("explicit --slots 7 gave %d", n)
	}
	for _, c := range [][2]int{{3, 64}, {1024, 64}, {4, 462848}} {
		l := exportLen(c[0], c[1])
		if l%pg != 0 || l < c[0]*c[1] || l-c[0]*c[1] >= pg {
			t.Errorf("exportLen(%d, %d) = %d: want the next page multiple", c[0], c[1], l)
		}
	}
}

// Without the module both sides say so, with the fix, before touching a peer.
func TestModuleMissing(t *testing.T) {
	if sys.XPMEMAvailable() == nil {
		t.Skip("/dev/xpmem exists here; the missing-module path cannot be observed")
	}
	check := func(side string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s opened without /dev/xpmem", side)
		}
		if !errors.Is(err, sys.ErrXPMEMNotLoaded) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v does not wrap ErrXPMEMNotLoaded and fs.ErrNotExist", side, err)
		}
		for _, want := range []string{"xpmem module not loaded (/dev/xpmem missing)", "load the xpmem kernel module (https://github.com/hpc/xpmem)", "--backend cma/shm"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s error %q lacks %q", side, err, want)
			}
		}
	}
	_, err := newSender(context.Background(), backend.Options{MaxFrame: 4096, Peer: backend.Peer{Mode: backend.PeerConnect, Sock: filepath.Join(t.TempDir(), "nobody.sock")}})
	check("sender", err)
	sock := filepath.Join(t.TempDir(), "recv.sock")
	_, err = newReceiver(context.Background(), backend.Options{Listen: sock})
	check("receiver", err)
	if _, serr := os.Stat(sock); serr == nil {
		t.Error("the receiver created its socket although it cannot run")
	}
}

func requireXPMEM(t *testing.T) {
	t.Helper()
	if err := sys.XPMEMAvailable(); err != nil {
		// The module is out of tree: stock CI kernels cannot load it, so
		// this is a plain skip, not a CI failure (docs/membench.md).
		t.Skipf("%v: load the xpmem kernel module (https://github.com/hpc/xpmem) to run the xpmem path between processes", err)
	}
}

func TestFramesIntact(t *testing.T) {
	requireXPMEM(t)
	peertest.Matrix(t, "xpmem", backend.Options{}, peertest.Sizes)
}

func TestReceiverKilled(t *testing.T) {
	requireXPMEM(t)
	peertest.KilledReceiver(t, "xpmem", backend.Options{})
}

func TestSenderKilled(t *testing.T) {
	requireXPMEM(t)
	peertest.KilledSender(t, "xpmem")
}
