//go:build linux

package afpacket_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/backend/afpacket"
	"github.com/wpg-dev/wpg/internal/testbed"
	"github.com/wpg-dev/wpg/template"
)

// TestKeptSlotsOnTheWire sends 1500-byte template frames through a
// 64-slot TX ring (each slot reused about 300 times) and a 4096-slot one
// (5 laps) with the Source told
// that the slots keep their contents, so only the varying bytes of each
// frame are written into a slot: every frame must arrive intact.
func TestKeptSlotsOnTheWire(t *testing.T) {
	v := testbed.NewVeth(t)
	spec, err := template.DefaultWithSize(1500)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		plan  string
		depth int
	}{
		{template.PlanAuto, 64},
		{template.PlanStream, 64},
		// 4096 slots of 2 KiB: 8 MiB, so Commit also warms each frame's lines.
		{template.PlanAuto, 4096},
	} {
		t.Run(fmt.Sprintf("%s/depth%d", tc.plan, tc.depth), func(t *testing.T) {
			const count, batch = 20480, 32
			done := startReceiver(t, v, count)
			src, err := template.Compile(spec, template.CompileOptions{Plan: tc.plan})
			if err != nil {
				t.Fatal(err)
			}
			snd, err := afpacket.NewSender(context.Background(), backend.Options{MaxFrame: src.MaxFrame(), Batch: batch, Net: backend.NetOptions{Interface: v.Outer, RingDepth: tc.depth}})
			if err != nil {
				t.Fatal(err)
			}
			defer snd.Close()
			if d := snd.Info().RingDepth; d != tc.depth {
				t.Fatalf("ring depth %d, want %d", d, tc.depth)
			}
			if !snd.KeepsBuffers() {
				t.Fatal("the TX ring does not keep its slots")
			}
			src.KeepFrames()
			// Paced (about 300 kpps) so that the receiver loses nothing.
			testbed.SendRendered(t, snd, src, count, batch, 100*time.Microsecond)
			r := <-done
			if r.Frames != count || !r.OK() || r.Corrupted != 0 {
				t.Fatalf("received %+v", r)
			}
		})
	}
}
