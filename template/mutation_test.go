package template

import (
	"math/rand"
	"os"
	"testing"
	"time"
)

// TestParseMutations feeds 5000 deterministic mutations of the examples
// and test templates to Parse (each must return within 3 s, without
// panicking, a positioned *Error or a Spec) and renders what parses in
// both plans: a fixed, quick share of what FuzzParse explores with -fuzz.
func TestParseMutations(t *testing.T) {
	seeds := [][]byte{}
	for _, p := range []string{"../examples/mixed.wpg.yaml", "../examples/udp64.wpg.yaml", "default.wpg.yaml"} {
		b, _ := os.ReadFile(p)
		seeds = append(seeds, b)
	}
	for _, y := range testTemplates {
		seeds = append(seeds, []byte(y))
	}
	r := rand.New(rand.NewSource(2))
	for it := 0; it < 5000; it++ {
		d := append([]byte(nil), seeds[r.Intn(len(seeds))]...)
		for m := 0; m < 1+r.Intn(8); m++ {
			if len(d) == 0 {
				break
			}
			i := r.Intn(len(d))
			switch r.Intn(5) {
			case 0:
				d[i] = byte(r.Intn(256))
			case 1:
				d = append(d[:i], d[min(len(d), i+1+r.Intn(8)):]...)
			case 2:
				d[i] = "0123456789:{}[],-'\"!&*|>%@` \n\t#"[r.Intn(31)]
			case 3:
				j := r.Intn(len(d))
				d = append(d[:i:i], append(append([]byte{}, d[min(i, j):max(i, j)]...), d[i:]...)...)
			case 4:
				d = append(d[:i:i], append([]byte{byte(r.Intn(256))}, d[i:]...)...)
			}
		}
		done := make(chan struct{})
		go func(d []byte) {
			defer close(done)
			s, err := Parse("h", d)
			if err != nil {
				if _, ok := err.(*Error); !ok {
					t.Errorf("error of type %T: %v", err, err)
				}
				return
			}
			a := render(t, s, CompileOptions{Plan: PlanStream}, 20, 5)
			b := render(t, s, CompileOptions{Plan: PlanAuto, PrerenderMaxBytes: 1 << 20}, 20, 5)
			for i := range a {
				checkFrame(t, a[i])
				if string(a[i]) != string(b[i]) {
					t.Errorf("frame %d differs between plans for\n%s", i, d)
				}
			}
		}(d)
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			t.Fatalf("hang on:\n%q", d)
		}
	}
}
