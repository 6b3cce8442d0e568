package inputerr

import (
	"errors"
	"fmt"
	"os"
	"testing"
)

func TestWordedKeepsTextAndSplits(t *testing.T) {
	sentinel := errors.New("bad rate")
	err := fmt.Errorf("rate: %w", Worded(sentinel, `bad rate "x": no number`, "has no number", "give 1Mpps"))
	if err.Error() != `rate: bad rate "x": no number` {
		t.Errorf("text %q", err)
	}
	if !errors.Is(err, sentinel) {
		t.Error("the sentinel is lost")
	}
	s := As(err)
	if s == nil || s.Reason() != "has no number" || s.Fix() != "give 1Mpps" {
		t.Errorf("As: %v", s)
	}
	if e := New(nil, `wait "nap"`, "is not a wait mode", "use spin"); e.Error() != `wait "nap" is not a wait mode; use spin` {
		t.Errorf("New: %q", e)
	}
	if As(errors.New("plain")) != nil {
		t.Error("a plain error splits")
	}
}

func TestWithFixKeepsTextAndChain(t *testing.T) {
	base := fmt.Errorf("needs CAP_NET_RAW: %w", os.ErrPermission)
	err := WithFix(base, "grant CAP_NET_RAW")
	var fx Fixer
	if err.Error() != base.Error() || !errors.Is(err, os.ErrPermission) || !errors.As(err, &fx) || fx.Fix() != "grant CAP_NET_RAW" {
		t.Fatalf("WithFix: %q, fixer %v", err, fx)
	}
	if WithFix(nil, "x") != nil {
		t.Error("WithFix(nil) is not nil")
	}
}
