package testbed

import (
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var (
	sharedOnce sync.Once
	sharedPath string
	sharedErr  error
)

// WpgShared returns a copy of the wpg binary (see Wpg) in a directory
// every user may enter, so that tests can run it as an unprivileged user
// (setpriv --reuid 65534). The copy is removed when the test process's
// temporary files are.
func WpgShared(t testing.TB) string {
	t.Helper()
	src := Wpg(t)
	sharedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wpg-shared-")
		if err != nil {
			sharedErr = err
			return
		}
		if err = os.Chmod(dir, 0o755); err != nil {
			sharedErr = err
			return
		}
		sharedPath = filepath.Join(dir, "wpg")
		sharedErr = copyFile(src, sharedPath, 0o755)
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedPath
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, mode)
}
