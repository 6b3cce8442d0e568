package job_test

import (
	"math"
	"testing"

	"github.com/wpg-dev/wpg/job"
)

// TestStreamFigures (issue #29): the report's streams[] carries each
// stream's frames, bytes and rates, not its frames alone: for
// examples/mixed.wpg.yaml's six streams (IMIX, a size range and fixed
// sizes, interleaved 4:2:1:1:1:1) the frames and bytes add up to the
// run's and are each stream's exactly, whatever the number of workers,
// and the rates add up to the run's; at layer l1 the bits count 24 B
// more per frame. A template whose streams keep their own schedules
// gives each its frames' lateness; a shared rate gives none.
func TestStreamFigures(t *testing.T) {
	// Bytes per frame of each stream: IMIX (7×64, 4×594, 1×1514 per 12),
	// 80…96 step 4, then 128, 96, 98, 64.
	mean := []float64{361.5, 128, 88, 96, 98, 64}
	for _, c := range []struct {
		workers int
		layer   string
	}{{1, ""}, {3, ""}, {1, "l1"}} {
		s := job.NewSpec()
		s.Template, s.Backend, s.Count, s.Workers, s.RateLayer = "../examples/mixed.wpg.yaml", "null", 60000, c.workers, c.layer
		rep, _ := noted(t, s, "")
		if len(rep.Streams) != 6 {
			t.Fatalf("workers %d: %d streams", c.workers, len(rep.Streams))
		}
		var frames, bytes uint64
		var pps, bps float64
		for i, st := range rep.Streams {
			frames += st.Frames
			bytes += st.Bytes
			pps += st.PPS
			bps += st.BPS
			want := uint64(60000 / 10 * []int{4, 2, 1, 1, 1, 1}[i])
			if st.Frames != want || float64(st.Bytes) != mean[i]*float64(want) || !(st.PPS > 0) || st.LatenessMaxNs != nil {
				t.Errorf("workers %d: stream %d: %d frames, %d bytes, %.0f pps, lateness %v; want %d frames, %.0f bytes, none", c.workers, i, st.Frames, st.Bytes, st.PPS, st.LatenessMaxNs, want, mean[i]*float64(want))
			}
		}
		if frames != rep.Frames || bytes != rep.Bytes || math.Abs(pps-rep.PPS) > rep.PPS*1e-9 || math.Abs(bps-rep.BPS) > rep.BPS*1e-9 {
			t.Errorf("workers %d %s: streams sum to %d frames, %d bytes, %.0f pps, %.0f bps; the run's %d, %d, %.0f, %.0f", c.workers, c.layer, frames, bytes, pps, bps, rep.Frames, rep.Bytes, rep.PPS, rep.BPS)
		}
	}
	s := job.NewSpec()
	s.Template, s.Backend = "../examples/stream-rates.wpg.yaml", "null"
	rep, _ := noted(t, s, "")
	for _, st := range rep.Streams {
		if st.LatenessMaxNs == nil || st.LatenessMeanNs == nil || *st.LatenessMeanNs > *st.LatenessMaxNs || st.Bytes == 0 {
			t.Errorf("stream %d (%s, its own rate %s): lateness max %v mean %v, %d bytes", st.Stream, st.Name, st.Rate, st.LatenessMaxNs, st.LatenessMeanNs, st.Bytes)
		}
	}
}
