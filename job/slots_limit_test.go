package job

import (
	"strings"
	"testing"
)

// TestSlotsBounded: a slot count over the ring's limit is a problem of the
// slots field, found before the run, not an error of worker 0 once it
// created its ring ("worker 0: shm sender: shmring: 100000000 slots").
func TestSlotsBounded(t *testing.T) {
	for _, n := range []int{-1, MaxSlots + 1, 100_000_000} {
		spec := NewSpec()
		spec.Backend, spec.StartReceiver, spec.Slots, spec.Count = "shm", true, n, 10
		err := Validate(spec, Env{})
		if err == nil || !strings.Contains(err.Error(), "slots") || !strings.Contains(err.Error(), "give 1 to 1048576") {
			t.Errorf("slots %d: %v; want a problem of slots naming the range", n, err)
		}
	}
	spec := NewSpec()
	spec.Backend, spec.StartReceiver, spec.Slots, spec.Count = "shm", true, MaxSlots, 10
	if err := Validate(spec, Env{}); err != nil && strings.Contains(err.Error(), "slots") {
		t.Errorf("slots %d: %v", MaxSlots, err)
	}
}
