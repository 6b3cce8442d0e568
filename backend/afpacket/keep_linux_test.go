//go:build linux

package afpacket_test

import (
	"context"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/backend/afpacket"
	"github.com/wpg-dev/wpg/internal/testbed"
	"github.com/wpg-dev/wpg/template"
)

// TestKeptSlotsOnTheWire sends 1500-byte template frames through a
// 64-slot TX ring (each slot reused about 300 times) with the Source told
// that the slots keep their contents, so only the varying bytes of each
// frame are written into a slot: every frame must arrive intact.
func TestKeptSlotsOnTheWire(t *testing.T) {
	v := testbed.NewVeth(t)
	spec, err := template.DefaultWithSize(1500)
	if err != nil {
		t.Fatal(err)
	}
	for _, plan := range []string{template.PlanAuto, template.PlanStream} {
		t.Run(plan, func(t *testing.T) {
			const count, batch = 20000, 32
			done := startReceiver(t, v, count)
			src, err := template.Compile(spec, template.CompileOptions{Plan: plan})
			if err != nil {
				t.Fatal(err)
			}
			snd, err := afpacket.NewSender(context.Background(), backend.Options{Interface: v.Outer, MaxFrame: src.MaxFrame(), Batch: batch, RingDepth: 64})
			if err != nil {
				t.Fatal(err)
			}
			defer snd.Close()
			if !snd.KeepsBuffers() {
				t.Fatal("the TX ring does not keep its slots")
			}
			src.KeepFrames()
			bufs, lens := make([][]byte, batch), make([]int, batch)
			for sent := 0; sent < count; {
				n, err := snd.Reserve(bufs[:min(batch, count-sent)])
				if err != nil {
					t.Fatal(err)
				}
				m := src.Render(bufs[:n], lens[:n], time.Now().UnixNano())
				if _, err := snd.Commit(lens[:m]); err != nil {
					t.Fatal(err)
				}
				sent += m
				// Paced (about 300 kpps) so that the receiver loses nothing.
				time.Sleep(100 * time.Microsecond)
			}
			if err := snd.Flush(); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if r.Frames != count || !r.OK() || r.Corrupted != 0 {
				t.Fatalf("received %+v", r)
			}
		})
	}
}
