package memcpy

import (
	"bytes"
	"context"
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/frame"
)

func TestCopiesRenderedFrames(t *testing.T) {
	reg, err := backend.Lookup("memcpy")
	if err != nil || reg.NeedsPeer || !reg.Payload {
		t.Fatalf("registration: %+v, %v", reg, err)
	}
	src, _ := frame.NewPayloadSource(frame.PayloadConfig{Size: 4096}, 0, 1)
	inst, err := reg.Open(context.Background(), backend.Options{MaxFrame: src.MaxFrame(), Batch: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	s, err := inst.NewSender(backend.Worker{MaxFrame: src.MaxFrame()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bufs := make([][]byte, 8)
	lens := make([]int, 8)
	n, _ := s.Reserve(bufs)
	m := src.Render(bufs[:n], lens[:n], 1)
	if k, err := s.Commit(lens[:m]); k != m || err != nil {
		t.Fatalf("Commit = %d, %v", k, err)
	}
	ms := s.(*sender)
	for i := 0; i < m; i++ {
		got := ms.dst[i*ms.maxFrame : i*ms.maxFrame+lens[i]]
		if !bytes.Equal(got, bufs[i][:lens[i]]) {
			t.Fatalf("frame %d not copied", i)
		}
		if sig, ok, corrupt := frame.DecodePayload(got); !ok || corrupt || sig.Seq != uint64(i) {
			t.Fatalf("copied frame %d does not verify", i)
		}
	}
	if a := testing.AllocsPerRun(100, func() { s.Reserve(bufs); s.Commit(lens[:n]) }); a != 0 {
		t.Fatalf("Reserve+Commit allocate %.1f times", a)
	}
}
