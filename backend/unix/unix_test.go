//go:build linux

package unix

import (
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/peer/peertest"
)

func TestMain(m *testing.M) { peertest.Main(m) }

func TestFramesIntact(t *testing.T) {
	peertest.Matrix(t, "unix", backend.Options{}, peertest.Sizes)
}

func TestReceiverKilled(t *testing.T) { peertest.KilledReceiver(t, "unix", backend.Options{}) }

func TestSenderKilled(t *testing.T) { peertest.KilledSender(t, "unix") }
