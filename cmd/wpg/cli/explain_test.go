package cli

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/inputerr"
)

// Explain adds the capability hint to a refused permission unless the
// error names its own remedy (inputerr.Fixer); it reads no error text.
func TestExplainAddsHintOnlyWithoutFix(t *testing.T) {
	bare := fmt.Errorf("open thing: %w", os.ErrPermission)
	if got := Explain(bare); !strings.Contains(got, "setcap") {
		t.Errorf("bare permission error: %q lacks the hint", got)
	}
	fixed := inputerr.WithFix(fmt.Errorf("afpacket on lo: needs CAP_NET_RAW: run as root: %w", os.ErrPermission), "grant CAP_NET_RAW")
	if got := Explain(fmt.Errorf("backend afpacket: %w", fixed)); strings.Contains(got, "setcap") {
		t.Errorf("an error with its own fix got the hint as well: %q", got)
	}
	if got := Explain(fmt.Errorf("no such file")); got != "no such file" {
		t.Errorf("other error changed: %q", got)
	}
}
