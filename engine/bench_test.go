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
		b.Run(plan, func(b *testing.B) {
			reg, err := backend.Lookup("null")
			if err != nil {
				b.Fatal(err)
			}
			spec := template.Default()
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
		})
	}
}
