package job

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wpg-dev/wpg/backend"
	_ "github.com/wpg-dev/wpg/backend/all"
)

// TestBackendDocExists: the page a Check failure's fix points to exists
// for every backend this build has (docs/shm.md and docs/udmabuf.md did
// not).
func TestBackendDocExists(t *testing.T) {
	for _, name := range backend.Names() {
		reg, err := backend.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		page := backendDoc(reg)
		if _, err := os.Stat(filepath.Join("..", page)); err != nil {
			t.Errorf("backend %s: its fix points to %s: %v", name, page, err)
		}
	}
}
