package backend_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/wpg-dev/wpg/backend"
)

func TestUnsupportedErrorUnwraps(t *testing.T) {
	err := fmt.Errorf("open: %w", &backend.UnsupportedError{Backend: "afxdp", What: "zero-copy", Reason: "the driver lacks it", Fix: "use --xdp-mode generic"})
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("%v does not unwrap to errors.ErrUnsupported", err)
	}
	var ue *backend.UnsupportedError
	if !errors.As(err, &ue) || ue.Backend != "afxdp" {
		t.Fatalf("errors.As: %+v", ue)
	}
	if got, want := ue.Error(), "afxdp: zero-copy is not supported: the driver lacks it; use --xdp-mode generic"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
