//go:build linux

package cma

import (
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/peer/peertest"
)

func TestMain(m *testing.M) { peertest.Main(m) }

func TestFramesIntact(t *testing.T) {
	peertest.Matrix(t, "cma", backend.Options{}, peertest.Sizes)
}

func TestFramesIntactTwoSlots(t *testing.T) {
	peertest.Matrix(t, "cma", backend.Options{Mem: backend.MemOptions{Slots: 2}}, peertest.Sizes[:3])
}

// TestFramesIntactOneSlot: with --slots 1 the sender renders into one
// staging slot, each frame once the receiver has copied the one before.
func TestFramesIntactOneSlot(t *testing.T) {
	peertest.Matrix(t, "cma", backend.Options{Mem: backend.MemOptions{Slots: 1}}, peertest.Sizes)
}

func TestReceiverKilled(t *testing.T) { peertest.KilledReceiver(t, "cma", backend.Options{}) }

func TestSenderKilled(t *testing.T) { peertest.KilledSender(t, "cma") }

func TestFramesIntactWritev(t *testing.T) {
	peertest.Matrix(t, "cma", backend.Options{Mem: backend.MemOptions{RecvMode: "writev"}}, peertest.Sizes)
}

func TestReceiverKilledWritev(t *testing.T) {
	peertest.KilledReceiver(t, "cma", backend.Options{Mem: backend.MemOptions{RecvMode: "writev"}})
}

func TestBadMode(t *testing.T) {
	if _, err := modeOf("sideways"); err == nil {
		t.Fatal("modeOf(sideways): no error")
	}
}
