package template

import (
	"os"
	"testing"
)

// The timetable of examples/stream-rates.wpg.yaml, which the report
// measures a run against: 1000 frames at 2 kpps (the last due at
// 499.5 ms), 5 bursts of 20 frames at 50 kpps 5 ms apart from 10 ms, and
// one burst of 50 100-byte frames at 8 Mbit/s (100 µs apart) from 30 ms.
func TestScheduleOfStreamRates(t *testing.T) {
	data, err := os.ReadFile("../examples/stream-rates.wpg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := Parse("stream-rates.wpg.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 3} { // the timetable is the run's, whatever worker compiled it
		src, err := Compile(spec, CompileOptions{Workers: workers, Worker: workers - 1})
		if err != nil {
			t.Fatal(err)
		}
		sc := src.Schedule()
		if end := sc.End(); end != 499.5e6 {
			t.Errorf("workers %d: End %v ns, want 499.5e6", workers, end)
		}
		for _, c := range []struct{ at, want float64 }{
			{-1, 0},
			{0, 1},         // steady's first frame
			{5e6, 11},      // steady's 0, 0.5, …, 5 ms
			{10e6, 21 + 1}, // and the first frame of the first burst
			{10.38e6, 21 + 20},
			{15e6, 31 + 20},            // the second burst is due at 15.38 ms
			{100e6, 201 + 100 + 50},    // bursts and the single burst done
			{499.5e6, 1000 + 100 + 50}, // everything
			{1e12, 1150},
		} {
			if got := sc.DueBy(c.at); got != c.want {
				t.Errorf("workers %d: DueBy(%v ns) = %v, want %v", workers, c.at, got, c.want)
			}
		}
	}
	// An unlimited stream has no end; an untimed source no timetable.
	spec, err = Parse("u.wpg.yaml", []byte("streams:\n  - {rate: 1kpps, ipv4: {}, udp: {}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := Compile(spec, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sc := src.Schedule(); sc.End() != -1 || sc.DueBy(1e9) != 1001 {
		t.Errorf("unlimited: End %v, DueBy(1 s) %v; want -1 and 1001", sc.End(), sc.DueBy(1e9))
	}
	if src, err = Compile(Default(), CompileOptions{}); err != nil || src.Schedule() != nil {
		t.Errorf("default template: Schedule %v (%v), want nil", src.Schedule(), err)
	}
}
