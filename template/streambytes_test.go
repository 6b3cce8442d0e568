package template

import (
	"path/filepath"
	"testing"

	"github.com/wpg-dev/wpg/frame"
)

// TestStreamBytes (issue #29): StreamBytes gives each stream the bytes of
// the frames rendered of it, for every example template, plan, worker and
// batch size: counted as rendered for all but one of the streams whose
// lengths vary (the one of the largest share has what the others leave),
// frames times the length for the others. Where every frame carries the
// signature, each stream's bytes are checked against the frames that
// name it; elsewhere (fragments, unsigned streams) their sum.
func TestStreamBytes(t *testing.T) {
	files, err := filepath.Glob("../examples/*.wpg.yaml")
	if err != nil || len(files) < 5 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, file := range files {
		spec := mustLoad(t, file)
		for _, plan := range []string{PlanAuto, PlanStream, PlanPrerender} {
			for _, workers := range []int{1, 2} {
				for w := range workers {
					src, err := Compile(spec, CompileOptions{Plan: plan, Worker: w, Workers: workers, Count: 5000})
					if err != nil {
						continue // a plan this template cannot take (prerender of a capture, …)
					}
					name := filepath.Base(file) + "/" + plan
					checkStreamBytes(t, name, src, 7+w*50)
				}
			}
		}
	}
}

// checkStreamBytes renders src's frames in batches of batch until it is
// exhausted (at most 3000 frames) and checks StreamBytes against them.
func checkStreamBytes(t *testing.T, name string, src *Source, batch int) {
	t.Helper()
	bufs := make([][]byte, batch)
	lens := make([]int, batch)
	for i := range bufs {
		bufs[i] = make([]byte, src.MaxFrame())
	}
	want := make([]uint64, len(src.streams))
	var total uint64
	signed := true
	for sent := 0; sent < 3000; {
		n := src.Render(bufs, lens, int64(1000+sent))
		for i := range n {
			total += uint64(lens[i])
			sig, ok := frame.ParseSignature(bufs[i][:lens[i]])
			if !ok || int(sig.Stream) >= len(want) {
				signed = false
				continue
			}
			want[sig.Stream] += uint64(lens[i])
		}
		sent += n
		if n < batch {
			break
		}
	}
	got := src.StreamBytes(total)
	var sum uint64
	for _, b := range got {
		sum += b
	}
	if sum != total {
		t.Errorf("%s: streams' bytes %v sum to %d, the frames rendered to %d", name, got, sum, total)
	}
	if !signed {
		return
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: stream %d: %d bytes, its frames had %d (all: %v, want %v)", name, i, got[i], want[i], got, want)
		}
	}
}
