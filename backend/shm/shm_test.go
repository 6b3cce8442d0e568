//go:build linux

package shm

import (
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/peer/peertest"
)

func TestMain(m *testing.M) { peertest.Main(m) }

func TestFramesIntactInPlace(t *testing.T) {
	peertest.Matrix(t, "shm", backend.Options{}, peertest.Sizes)
}

func TestFramesIntactCopyOut(t *testing.T) {
	peertest.Matrix(t, "shm", backend.Options{Mem: backend.MemOptions{RecvMode: "copy"}}, peertest.Sizes)
}

func TestFramesIntactBusyWaitFewSlots(t *testing.T) {
	peertest.Matrix(t, "shm", backend.Options{Mem: backend.MemOptions{BusyWait: true, Slots: 2}}, peertest.Sizes[:3])
}

func TestReceiverKilled(t *testing.T) { peertest.KilledReceiver(t, "shm", backend.Options{}) }

func TestSenderKilled(t *testing.T) { peertest.KilledSender(t, "shm") }

func TestDefaultSlots(t *testing.T) {
	for _, c := range []struct{ frame, want int }{{96, 32768}, {64<<10 + 32, 128}, {128<<10 + 32, 2}, {460832, 2}, {1<<20 + 32, 2}, {2<<20 + 32, 2}, {4<<20 + 32, 4}, {16<<20 + 32, 4}, {1<<30 + 32, 2}} {
		if got := DefaultSlots(c.frame); got != c.want {
			t.Errorf("DefaultSlots(%d) = %d, want %d", c.frame, got, c.want)
		}
	}
}
