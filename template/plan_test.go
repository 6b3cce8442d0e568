package template

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// countingCtx is a context that is cancelled at the n-th look at Err.
type countingCtx struct {
	context.Context
	looks, at atomic.Int64
}

func (c *countingCtx) Err() error {
	if c.looks.Add(1) >= c.at.Load() {
		return context.Canceled
	}
	return nil
}

// TestPrerenderStops: prerendering looks at its context every checkEvery
// frames and gives up with its error (item 6: SIGTERM was ignored for the
// whole prerender). Structural, no timing: a prerender of 1 M frames
// looks at the context at least 1 M / checkEvery times, and stops at the
// look that finds it cancelled.
func TestPrerenderStops(t *testing.T) {
	for _, yml := range []string{
		"streams: [{count: 1000000, ipv4: {}, tcp: {seq: {from: 0, to: 4000000000}}}]\n",                  // whole frames
		"streams: [{count: 1000000, size: [74, 100], ipv4: {}, tcp: {seq: {from: 0, to: 4000000000}}}]\n", // varying sizes
		"streams: [{count: 1000000, size: 300, ipv4: {}, tcp: {seq: {from: 0, to: 4000000000}}}]\n",       // delta
	} {
		spec, err := Parse("t.wpg.yaml", []byte(yml))
		if err != nil {
			t.Fatal(err)
		}
		o := CompileOptions{Plan: PlanPrerender, PrerenderMaxBytes: 4 << 30}
		ctx := &countingCtx{Context: context.Background()}
		ctx.at.Store(1 << 62)
		if _, err := CompileContext(ctx, spec, o); err != nil {
			t.Fatal(err)
		}
		looks := ctx.looks.Load()
		if looks < 1000000/checkEvery {
			t.Errorf("%s: %d looks at the context for 1 M frames", yml, looks)
		}
		ctx = &countingCtx{Context: context.Background()}
		ctx.at.Store(looks / 2)
		if _, err := CompileContext(ctx, spec, o); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: cancelled halfway: %v, want context.Canceled", yml, err)
		}
	}
}

// TestPrerenderFixedSizeHasNoIndex: frames of one size are found by
// arithmetic; the 16-byte index per frame (480 MB for 30 M frames) is only
// for varying sizes, and is counted against the byte limit (item 6).
func TestPrerenderFixedSizeHasNoIndex(t *testing.T) {
	spec, err := Parse("t.wpg.yaml", []byte("streams: [{count: 1000, ipv4: {}, udp: {src: {from: 1, to: 1000}}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := Compile(spec, CompileOptions{Plan: PlanPrerender})
	if err != nil {
		t.Fatal(err)
	}
	if cs := src.streams[0]; !cs.pre || cs.frames != nil || len(cs.arena) != 64*1000 {
		t.Fatalf("pre %v, index %d entries, arena %d bytes", cs.pre, len(cs.frames), len(cs.arena))
	}
	// 1000 frames of 64 or 65 bytes take 64.5 KB, plus 16 KB of index:
	// a 70 KB limit no longer lets them through.
	spec, err = Parse("t.wpg.yaml", []byte("streams: [{count: 1000, size: [64, 65], ipv4: {}, udp: {src: {from: 1, to: 1000}}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compile(spec, CompileOptions{Plan: PlanPrerender, PrerenderMaxBytes: 70_000}); err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Fatalf("index not counted: %v", err)
	}
}

// TestCountBoundsPrerender: with the run's --count, a worker prerenders
// no more than its share of it (item 7: "set a count" with a count set),
// and the frames are those of the streaming plan.
func TestCountBoundsPrerender(t *testing.T) {
	spec, err := Parse("t.wpg.yaml", []byte("streams: [{ipv4: {}, tcp: {seq: {from: 0, to: 4000000000}}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	const W, count = 3, 10
	for w := range W {
		o := CompileOptions{Worker: w, Workers: W, Plan: PlanPrerender, Count: count}
		src, err := Compile(spec, o)
		if err != nil {
			t.Fatalf("worker %d: %v", w, err)
		}
		want := count / W
		if w < count%W {
			want++
		}
		if plan, detail := src.Plan(); plan != PlanPrerender || src.streams[0].npre != want || !strings.Contains(detail, "what --count leaves this worker") {
			t.Fatalf("worker %d: %s (%s), %d prerendered, want %d", w, plan, detail, src.streams[0].npre, want)
		}
		o.Plan = PlanStream
		ref := render(t, spec, o, want, 42)
		o.Plan = PlanPrerender
		got := render(t, spec, o, want, 42)
		for j := range ref {
			if string(ref[j]) != string(got[j]) {
				t.Fatalf("worker %d frame %d differs from the streaming plan", w, j)
			}
		}
	}
	// Without a count it still cannot be prerendered, and says why.
	if _, err := Compile(spec, CompileOptions{Plan: PlanPrerender}); err == nil || !strings.Contains(err.Error(), "set a count") {
		t.Fatalf("no count: %v", err)
	}
}

// TestPrerenderWithinMemAvailable: the byte limit is at most half of the
// memory available (item 22: --prerender-max-bytes 100GiB planned 100 GiB
// on any machine); the error names MemAvailable, and CheckOnly reports it
// without rendering anything.
func TestPrerenderWithinMemAvailable(t *testing.T) {
	spec, err := Parse("t.wpg.yaml", []byte("streams: [{count: 100000, size: 1000, ipv4: {}, udp: {src: {from: 1, to: 65535}, dst: {from: 1, to: 9}}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	o := CompileOptions{Plan: PlanPrerender, PrerenderMaxBytes: 100 << 30, MemAvailable: 100 << 20, CheckOnly: true}
	_, err = Compile(spec, o)
	if err == nil || !strings.Contains(err.Error(), "50.0 MiB") || !strings.Contains(err.Error(), "MemAvailable") {
		t.Fatalf("100 MB of frames with 100 MiB available: %v", err)
	}
	o.Plan = PlanAuto
	o.CheckOnly = false
	src, err := Compile(spec, o)
	if err != nil {
		t.Fatal(err)
	}
	if plan, detail := src.Plan(); plan != PlanStream || !strings.Contains(detail, "MemAvailable") {
		t.Fatalf("auto: %s (%s)", plan, detail)
	}
	o.MemAvailable = 1 << 30
	if src, err = Compile(spec, o); err != nil {
		t.Fatal(err)
	}
	if plan, _ := src.Plan(); plan != PlanPrerender {
		t.Fatalf("with 1 GiB available: %s", plan)
	}
}
