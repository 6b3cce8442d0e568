package template

import (
	"bytes"
	"os"
	"testing"
)

// FuzzParse: no input panics the parser; whatever parses compiles, renders
// frames whose checksums are valid, and the same frames in both plans.
func FuzzParse(f *testing.F) {
	for _, p := range []string{"../examples/mixed.wpg.yaml", "../examples/udp64.wpg.yaml", "default.wpg.yaml",
		"../examples/mpls.wpg.yaml", "../examples/gre.wpg.yaml", "../examples/vxlan.wpg.yaml", "../examples/geneve.wpg.yaml",
		"../examples/raw.wpg.yaml", "../examples/tcp-options.wpg.yaml", "../examples/bad-checksums.wpg.yaml", "../examples/syn-sweep.wpg.yaml", "../examples/fragments.wpg.yaml"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, y := range testTemplates {
		f.Add([]byte(y))
	}
	f.Add([]byte("streams: [{size: {imix: {64: 1, 100: 2}}, ipv4: {ttl: [1, 2]}, udp: {}}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.wpg.yaml", data)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if os.Getenv("FUZZ_PARSE_ONLY") != "" {
			return
		}
		const n = 12
		a := render(t, s, CompileOptions{Plan: PlanStream}, n, 5)
		b := render(t, s, CompileOptions{Plan: PlanAuto, PrerenderMaxBytes: 256 << 10}, n, 5)
		// Checksums are right unless the template asks for bad ones, and
		// a raw layer may hold anything (a header of its own making).
		verify := !bytes.Contains(data, []byte("bad")) && !bytes.Contains(data, []byte("raw"))
		for i := range a {
			if verify {
				checkFrame(t, a[i])
			}
			if string(a[i]) != string(b[i]) {
				t.Fatalf("frame %d differs between plans", i)
			}
		}
	})
}
