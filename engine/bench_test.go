package engine_test

import (
	"context"
	"testing"

	"github.com/wpg-dev/wpg/backend"
	_ "github.com/wpg-dev/wpg/backend/null"
	"github.com/wpg-dev/wpg/engine"
	"github.com/wpg-dev/wpg/template"
)

// BenchmarkEngineNull runs the whole engine (worker thread, pacer-less hot
// loop, template source, null backend) for b.N frames of the embedded
// 64-byte template: ns/op is the cost of one frame, allocs/op shows that
// the loop allocates nothing (the setup's few allocations vanish over b.N).
func BenchmarkEngineNull(b *testing.B) {
	for _, plan := range []string{template.PlanStream, template.PlanPrerender} {
		b.Run(plan, func(b *testing.B) { benchEngineNull(b, template.Default(), plan) })
	}
}

// benchEngineNull runs b.N frames of spec under plan through the engine
// and the null backend, one worker, batches of 256.
func benchEngineNull(b *testing.B, spec *template.Spec, plan string) {
	reg, err := backend.Lookup("null")
	if err != nil {
		b.Fatal(err)
	}
	cfg := engine.Config{
		Backend: reg,
		NewSource: func(_ context.Context, w, n int) (engine.Source, error) {
			return template.Compile(spec, template.CompileOptions{Worker: w, Workers: n, Plan: plan})
		},
		Workers: 1,
		Batch:   256,
		Count:   uint64(b.N),
	}
	b.ReportAllocs()
	b.ResetTimer()
	res := mustRun(b, cfg)
	if res.Frames != uint64(b.N) {
		b.Fatalf("sent %d of %d", res.Frames, b.N)
	}
	b.ReportMetric(float64(res.Frames)/res.Seconds/1e6, "Mpps")
}

// BenchmarkEngineNullVaried is BenchmarkEngineNull for the varied traffic
// of issue #27 (template's BenchmarkRenderVaried): one incrementing field,
// one random field, four varied fields, the mixed example and a tuple of
// 1M flows, each under the plan the issue measures.
func BenchmarkEngineNullVaried(b *testing.B) {
	for _, c := range []struct{ name, file, plan string }{
		{"inc1", "../template/testdata/varied/inc1.wpg.yaml", template.PlanStream},
		{"rand1", "../template/testdata/varied/rand1.wpg.yaml", template.PlanStream},
		{"four", "../template/testdata/varied/four.wpg.yaml", template.PlanStream},
		{"mixed", "../examples/mixed.wpg.yaml", template.PlanAuto},
		{"tuple1m", "../template/testdata/varied/tuple1m.wpg.yaml", template.PlanStream},
	} {
		spec, err := template.Load(c.file)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/"+c.plan, func(b *testing.B) { benchEngineNull(b, spec, c.plan) })
	}
}
