package e2e

import (
	"os"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// TestMain removes the wpg binaries the tests built once they have run.
func TestMain(m *testing.M) {
	code := m.Run()
	testbed.RemoveBuilds()
	os.Exit(code)
}
