package template

import "testing"

// variedCases are the varied-traffic templates of issue #27
// (testdata/varied and examples/mixed.wpg.yaml) with the plan each is
// measured under: streamed where wpg cannot replay a short period.
var variedCases = []struct{ name, file, plan string }{
	{"inc1", "testdata/varied/inc1.wpg.yaml", PlanStream},
	{"rand1", "testdata/varied/rand1.wpg.yaml", PlanStream},
	{"four", "testdata/varied/four.wpg.yaml", PlanStream},
	{"mixed", "../examples/mixed.wpg.yaml", PlanAuto},
	{"tuple1m", "testdata/varied/tuple1m.wpg.yaml", PlanStream},
}

// BenchmarkRenderVaried measures Render of batches of 256 frames for the
// varied traffic of issue #27: one incrementing field (the IPv4 source
// over a /16), one random field, four varied fields (VLAN id, random
// source address, destination port, frame size), the mixed example
// (plan auto) and a tuple of 1M flows, each streamed.
func BenchmarkRenderVaried(b *testing.B) {
	for _, c := range variedCases {
		s, err := Load(c.file)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/"+c.plan, func(b *testing.B) { benchRender(b, s, c.plan) })
	}
}
