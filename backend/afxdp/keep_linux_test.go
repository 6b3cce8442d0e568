//go:build linux

package afxdp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/testbed"
	"github.com/wpg-dev/wpg/recv"
	"github.com/wpg-dev/wpg/template"
)

// TestKeptChunksOnTheWire sends 1500-byte template frames with the default
// plan into UMEM chunks that the Source is told keep their contents (as the
// engine tells it for afxdp), so a chunk that comes round again gets only
// the bytes that change: a frame in which nothing but the signature varies
// (prerendered as one frame) and the default template at 1500 bytes (its
// source port varying: a prerendered delta). The plan stays the default's
// (prerender) and says that the buffers keep their frames, and every frame
// arrives intact, exactly once.
func TestKeptChunksOnTheWire(t *testing.T) {
	v := testbed.NewVeth(t)
	fixed, err := template.Parse("fixed1500.wpg.yaml", []byte(`
streams:
  - size: 1500
    ipv4: {src: 198.18.0.1, dst: 198.19.0.1}
    udp: {src: 9, dst: 9}
`))
	if err != nil {
		t.Fatal(err)
	}
	ported, err := template.DefaultWithSize(1500)
	if err != nil {
		t.Fatal(err)
	}
	for name, spec := range map[string]*template.Spec{"fixed": fixed, "default-1500": ported} {
		t.Run(name, func(t *testing.T) {
			const count, batch = 20480, 64
			var rx backend.Receiver
			if err := v.Do(func() error {
				in, err := open(context.Background(), backend.Options{Workers: 1, Batch: batch, Net: backend.NetOptions{Interface: v.Inner}})
				if err != nil {
					return err
				}
				rx, err = in.NewReceiver()
				return err
			}); err != nil {
				t.Fatal(err)
			}
			defer rx.Close()
			done := make(chan recv.Result, 1)
			go func() {
				r, err := recv.Run(context.Background(), rx, recv.DecodePacket, recv.Options{Expect: count, IdleTimeout: 2 * time.Second, Duration: time.Minute})
				if err != nil {
					t.Error(err)
				}
				done <- r
			}()
			src, err := template.Compile(spec, template.CompileOptions{})
			if err != nil {
				t.Fatal(err)
			}
			in, err := open(context.Background(), backend.Options{Workers: 1, Batch: batch, MaxFrame: src.MaxFrame(), Net: backend.NetOptions{Interface: v.Outer}})
			if err != nil {
				t.Fatal(err)
			}
			snd, err := in.NewSender(backend.Worker{MaxFrame: src.MaxFrame()})
			if err != nil {
				t.Fatal(err)
			}
			defer snd.Close()
			if !snd.(*Sender).KeepsBuffers() {
				t.Fatal("UMEM chunks not kept")
			}
			src.KeepFrames()
			if plan, detail := src.Plan(); plan != template.PlanPrerender || !strings.Contains(detail, "keep their frames") {
				t.Fatalf("plan %q (%s): want prerender, its detail saying the buffers keep their frames", plan, detail)
			}
			// Paced (about 300 kpps) so that the receiver loses nothing.
			testbed.SendRendered(t, snd, src, count, batch, 200*time.Microsecond)
			r := <-done
			if r.Frames != count || !r.OK() || r.Corrupted != 0 || r.Duplicated != 0 {
				t.Fatalf("received %+v", r)
			}
		})
	}
}
