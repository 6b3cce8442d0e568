package sysinfo

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/sys"
)

func TestSummariseStalls(t *testing.T) {
	// one second with a 37 µs stall every 1 ms (phase 500 µs) and a 5 µs
	// one in between
	var at, dur []int64
	var lost, longest int64
	for ms := int64(0); ms < 1000; ms++ {
		at = append(at, ms*1e6+500_000, ms*1e6+800_000)
		dur = append(dur, 37_000, 5_000)
		lost += 42_000
	}
	longest = 37_000
	s := summarise(1, 1e9, 2000, len(dur), lost, longest, at, dur)
	if s.Stalls != 2000 || s.PerSecond != 2000 || s.LostShare != 0.042 || s.MaxNs != 37_000 {
		t.Errorf("summary %+v", s)
	}
	if s.P50Ns != 37_000 || s.P99Ns != 37_000 {
		t.Errorf("p50 %d p99 %d", s.P50Ns, s.P99Ns)
	}
	if s.PeriodNs != 1e6 {
		t.Errorf("period %d, want 1 ms", s.PeriodNs)
	}
	var b bytes.Buffer
	WriteStalls(&b, []CPUStalls{s})
	if !strings.Contains(b.String(), "every 1ms") || !strings.Contains(b.String(), "4.20 %") {
		t.Errorf("table:\n%s", b.String())
	}
}

func TestStallPeriodIrregular(t *testing.T) {
	var at, dur []int64
	t0, x := int64(0), uint32(1)
	for range 300 {
		x = x*1664525 + 1013904223 // a pseudo-random 0.1 to 0.9 ms apart
		t0 += 100_000 + int64(x>>8)%800_000
		at = append(at, t0)
		dur = append(dur, 20_000)
	}
	if p := period(at, dur, 10_000); p != 0 {
		t.Errorf("irregular stalls gave period %d", p)
	}
	if p := period(at[:5], dur[:5], 10_000); p != 0 {
		t.Errorf("too few stalls gave period %d", p)
	}
}

// TestProbeStalls probes the first CPU this process may use: CPU 0 may be
// outside the cpuset (a container, taskset).
func TestProbeStalls(t *testing.T) {
	allowed, err := sys.AllowedCPUs()
	if err != nil || len(allowed) == 0 {
		t.Fatalf("allowed CPUs %v: %v", allowed, err)
	}
	cpus := allowed[:1]
	got, err := ProbeStalls(cpus, 30*time.Millisecond, 2*time.Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].CPU != cpus[0] || got[0].Seconds < 0.03 || got[0].ThresholdNs != 2000 {
		t.Fatalf("probe %+v", got)
	}
	if got[0].LostShare < 0 || got[0].LostShare > 1 || got[0].MaxNs < got[0].P99Ns {
		t.Errorf("inconsistent probe %+v", got[0])
	}
	if _, err := ProbeStalls(cpus, 0, time.Microsecond); err == nil {
		t.Error("zero duration accepted")
	}
}

func TestStallPeriodAmongNoise(t *testing.T) {
	// a 37 µs stall every 1 ms, and between them 20 µs ones at irregular
	// places: the period is still found
	var at, dur []int64
	for ms := int64(0); ms < 200; ms++ {
		at = append(at, ms*1e6+500_000)
		dur = append(dur, 37_000)
		for k := int64(0); k < ms%4; k++ {
			at = append(at, ms*1e6+600_000+k*97_000+ms*1_300%50_000)
			dur = append(dur, 20_000)
		}
	}
	if p := period(at, dur, 10_000); p != 1e6 {
		t.Errorf("period %d, want 1 ms", p)
	}
}

// TestNoStallsRow: a CPU without a stall above the threshold says none,
// not a distribution of 0s "irregular".
func TestNoStallsRow(t *testing.T) {
	var b bytes.Buffer
	WriteStalls(&b, []CPUStalls{summarise(0, 1e9, 1000, 0, 0, 0, nil, nil)})
	row := strings.Split(strings.TrimSpace(b.String()), "\n")[1]
	if !strings.HasSuffix(row, "none") || strings.Contains(row, "irregular") || strings.Contains(row, "0s") {
		t.Errorf("row of a CPU without stalls: %q", row)
	}
}
