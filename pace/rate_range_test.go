package pace

import (
	"errors"
	"strings"
	"testing"
)

// Issue #17 item 10: zero means flat out in every unit, as "0" always did.
func TestParseRateZeroAnyUnit(t *testing.T) {
	for _, s := range []string{"0", "0pps", "0kpps", "0Mpps", "0fps", "0bps", "0Gbps", "0Gbit/s", "0.0", "0e3pps", "ifg=0", "ifg=0s"} {
		r, err := ParseRate(s)
		if err != nil || !r.Unlimited() {
			t.Errorf("ParseRate(%q) = %v, %v; want unlimited (flat out)", s, r, err)
		}
	}
	for _, s := range []string{"-1pps", "-0.5Gbps", "0parsecs", "ifg=-1us"} {
		if _, err := ParseRate(s); !errors.Is(err, ErrBadRate) {
			t.Errorf("ParseRate(%q): %v, want an ErrBadRate", s, err)
		}
	}
}

// Issue #17 item 5: a per-worker interval beyond what the pacer's int64-ns
// schedule holds (or a rate beyond MaxFPS) is an error giving the range,
// instead of silently becoming no rate at all.
func TestCheckRange(t *testing.T) {
	for _, c := range []struct {
		rate    string
		frame   float64
		workers int
		ok      bool
	}{
		{"1Mpps", 64, 1, true},
		{"1e-9pps", 64, 1, true},   // one frame every 31.7 years
		{"1e-10pps", 64, 1, false}, // every 317 years: beyond 2⁶² ns
		{"1e-9pps", 64, 8, false},  // each worker one frame every 254 years
		{"1e12pps", 64, 1, true},
		{"2e12pps", 64, 1, false},
		{"2e12pps", 64, 2, true},
		{"1bps", 1500, 1, true},
		{"1e-15bps", 1500, 1, false},
		{"ifg=100h", 64, 1, true},
		{"ifg=2562047h", 64, 1, false},   // about the largest Duration, 2⁶³ ns: over MaxInterval (2⁶² ns)
		{"ifg=1000000h", 64, 256, false}, // ifg × workers overflows a Duration
	} {
		r, err := ParseRate(c.rate)
		if err != nil {
			t.Fatalf("ParseRate(%q): %v", c.rate, err)
		}
		err = r.CheckRange(c.frame, L2, c.workers)
		if (err == nil) != c.ok {
			t.Errorf("%s at %v B, %d workers: %v, want ok=%v", c.rate, c.frame, c.workers, err, c.ok)
			continue
		}
		if err != nil && (!errors.Is(err, ErrRateRange) || !strings.Contains(err.Error(), "give a rate from")) {
			t.Errorf("%s: %v: want ErrRateRange with the range", c.rate, err)
		}
	}
	if err := (Rate{}).CheckRange(64, L2, 4); err != nil {
		t.Errorf("unlimited: %v", err)
	}
	// The pacer of a rate just inside the range keeps a positive period.
	r, _ := ParseRate("1e-9pps")
	p := New(r.Config(64, L2, 1))
	if p.unlimited || p.periodNs <= 0 {
		t.Fatalf("1e-9pps pacer: unlimited=%v period %d ns", p.unlimited, p.periodNs)
	}
}
