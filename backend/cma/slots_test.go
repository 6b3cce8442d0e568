//go:build linux

package cma

import (
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/backend"
)

// TestSlotsBeyondTheRing: --slots above the descriptor ring's 1024 was
// lowered to 1024 without a word; it is refused, naming the limit, and
// the limit itself is taken.
func TestSlotsBeyondTheRing(t *testing.T) {
	reg, err := backend.Lookup("cma")
	if err != nil {
		t.Fatal(err)
	}
	var o backend.Options
	o.Mem.Slots = maxSlots + 1
	if err := reg.Check(o); err == nil || !strings.Contains(err.Error(), "--slots 1025") || !strings.Contains(err.Error(), "at most 1024") {
		t.Errorf("--slots %d: %v", o.Mem.Slots, err)
	}
	o.Mem.Slots = maxSlots
	if err := reg.Check(o); err != nil {
		t.Errorf("--slots %d: %v", o.Mem.Slots, err)
	}
}
