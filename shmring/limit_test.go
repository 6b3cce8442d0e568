//go:build linux

package shmring

import (
	"testing"

	"github.com/wpg-dev/wpg/frame"
)

// TestLayoutTakesTheLargestPayloadFrame: a slot holds wpg's documented
// largest frame, a 1 GiB payload and its header, and nothing larger
// Layout allocates nothing.
func TestLayoutTakesTheLargestPayloadFrame(t *testing.T) {
	largest := frame.MaxPayload + frame.PayloadHeaderLen
	if MaxSlotSize != largest {
		t.Fatalf("MaxSlotSize %d, the largest payload frame is %d", MaxSlotSize, largest)
	}
	if _, stride, size, err := Layout(Config{Slots: 2, SlotSize: largest}); err != nil || stride < largest || size < 2*int64(largest) {
		t.Fatalf("1 GiB payload frame: stride %d size %d err %v", stride, size, err)
	}
	if _, _, _, err := Layout(Config{Slots: 2, SlotSize: largest + 1}); err == nil {
		t.Fatal("a slot above the largest frame was accepted")
	}
}
