package job

import (
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/peer"
)

// A sender's request fills what the receiver's spec leaves unset; a value
// it contradicts is refused naming both; the receiver's batch stays.
func TestApplyRequest(t *testing.T) {
	q := peer.RecvRequest{Backend: "shm", MaxFrame: 4128, Verify: "sample", RecvMode: "copy", BusyWait: true, Batch: 256}
	s, err := applyRequest(RecvSpec{Listen: "@x"}, q)
	if err != nil || s.Backend != "shm" || s.MaxFrame != 4128 || s.Verify != "sample" || s.RecvMode != "copy" || !s.BusyWait || s.Batch != 256 {
		t.Fatalf("applyRequest to an empty spec = %+v, %v", s, err)
	}
	if s, err := applyRequest(RecvSpec{Backend: "shm", Verify: "on", Batch: 32}, peer.RecvRequest{Backend: "shm", Batch: 256}); err != nil || s.Batch != 32 {
		t.Fatalf("same backend, default verify, own batch: %+v, %v", s, err)
	}
	_, err = applyRequest(RecvSpec{Backend: "cma", Verify: "off", MaxFrame: 100}, q)
	for _, want := range []string{
		"the sender asks for backend shm, this receiver was started with backend cma",
		"the sender asks for --verify sample, this receiver was started with --verify off",
		"the sender asks for --size 4128, this receiver was started with --size 100",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("applyRequest with contradictions = %v; want %q", err, want)
		}
	}
}
