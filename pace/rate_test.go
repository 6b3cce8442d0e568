package pace

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestParseRateGood(t *testing.T) {
	for _, c := range []struct {
		in   string
		fps  float64 // at 1500 B, L2
		str  string
		bits bool
		ifg  bool
	}{
		{"1Mpps", 1e6, "1Mpps", false, false},
		{"250kpps", 250e3, "250kpps", false, false},
		{"250Kpps", 250e3, "250kpps", false, false},
		{"1000pps", 1000, "1kpps", false, false},
		{"1.5Mpps", 1.5e6, "1.5Mpps", false, false},
		{"15fps", 15, "15fps", false, false},
		{" 2kfps ", 2000, "2kfps", false, false},
		{"1e6pps", 1e6, "1Mpps", false, false},
		{"10Gbps", 10e9 / (8 * 1500), "10Gbps", true, false},
		{"500Mbps", 500e6 / (8 * 1500), "500Mbps", true, false},
		{"2.5Gbit/s", 2.5e9 / (8 * 1500), "2.5Gbps", true, false},
		{"800kbps", 800e3 / (8 * 1500), "800kbps", true, false},
		// the habits of other tools (docs/rate.md)
		{"1mpps", 1e6, "1Mpps", false, false},                // TRex
		{"2MPPS", 2e6, "2Mpps", false, false},                // any case
		{"10gbps", 10e9 / (8 * 1500), "10Gbps", true, false}, // TRex
		{"1Mbit", 1e6 / (8 * 1500), "1Mbps", true, false},    // tc, trafgen
		{"100mbit", 100e6 / (8 * 1500), "100Mbps", true, false},
		{"10M", 10e6 / (8 * 1500), "10Mbps", true, false}, // iperf3: bits
		{"10m", 10e6 / (8 * 1500), "10Mbps", true, false},
		{"1Gbit/s", 1e9 / (8 * 1500), "1Gbps", true, false},
		{"1mibit", 1 << 20 / (8 * 1500.0), "1.048576Mbps", true, false}, // tc's IEC prefixes
		{"3Kibit/s", 3 * 1024 / (8 * 1500.0), "3.072kbps", true, false},
		{"1.5 Gbit", 1.5e9 / (8 * 1500), "1.5Gbps", true, false},
		{"ifg=10us", 1e5, "ifg=10µs", false, true},
		{"IFG=1.5ms", 1e9 / 1.5e6, "ifg=1.5ms", false, true},
	} {
		r, err := ParseRate(c.in)
		if err != nil {
			t.Errorf("ParseRate(%q): %v", c.in, err)
			continue
		}
		if got := r.FramesPerSecond(1500, L2); math.Abs(got-c.fps) > 1e-9*c.fps {
			t.Errorf("ParseRate(%q) = %v fps at 1500 B, want %v", c.in, got, c.fps)
		}
		if r.String() != c.str || r.Bits() != c.bits || r.IFG() != c.ifg || r.Unlimited() {
			t.Errorf("ParseRate(%q) = %q bits=%v ifg=%v unlimited=%v", c.in, r, r.Bits(), r.IFG(), r.Unlimited())
		}
		// String round-trips
		if r2, err := ParseRate(r.String()); err != nil || r2.FramesPerSecond(1500, L2) != r.FramesPerSecond(1500, L2) {
			t.Errorf("ParseRate(%q.String()=%q) = %v, %v", c.in, r.String(), r2, err)
		}
	}
	for _, s := range []string{"", "  ", "0", "unlimited", "max"} {
		r, err := ParseRate(s)
		if err != nil || !r.Unlimited() || r.FramesPerSecond(64, L2) != 0 || r.String() != "" {
			t.Errorf("ParseRate(%q) = %v, %v; want unlimited", s, r, err)
		}
	}
}

func TestParseRateBad(t *testing.T) {
	for _, c := range []struct{ in, hint string }{
		{"1000", "missing unit"},
		{"fast", "no number"},
		{"-5pps", "positive"},
		{"10MBps", "bytes per second"},
		{"10MB/s", "write bits, e.g. 80Mbps"}, // trafgen's bytes
		{"10MB", "bytes per second"},
		{"1KiB", "write bits, e.g. 8.192kbps"},
		{"1Kibps", "unknown unit"}, // tc: kibibytes
		{"10Mb", "unknown unit"},
		{"10Gbytes", "unknown unit"},
		{"5kHz", "unknown unit"},
		{"ifg=", "ifg="},
		{"ifg=-1us", "ifg="},
		{"ifg=10", "ifg="},
		{"1..2pps", "not a number"},
		{"1Tpps", "unknown unit"},
	} {
		_, err := ParseRate(c.in)
		if err == nil {
			t.Errorf("ParseRate(%q) accepted", c.in)
			continue
		}
		if !errors.Is(err, ErrBadRate) || !strings.Contains(err.Error(), c.hint) || !strings.Contains(err.Error(), "examples:") {
			t.Errorf("ParseRate(%q) error %q: want ErrBadRate mentioning %q and examples", c.in, err, c.hint)
		}
	}
}

func TestLayer(t *testing.T) {
	r, _ := ParseRate("10Gbps")
	// 60-byte frames (64 on the wire with FCS) at L1: the textbook 14.88 Mpps
	if got := r.FramesPerSecond(60, L1); math.Abs(got-10e9/(84*8)) > 1e-6 {
		t.Errorf("10Gbps at 60 B, L1 = %v fps", got)
	}
	if got := r.FramesPerSecond(60, L2); math.Abs(got-10e9/(60*8)) > 1e-6 {
		t.Errorf("10Gbps at 60 B, L2 = %v fps", got)
	}
	if r.FramesPerSecond(0, L2) != 0 {
		t.Error("zero-byte frames should give 0 fps")
	}
	for in, want := range map[string]Layer{"": L2, "l2": L2, "L1": L1, "l1": L1} {
		if l, err := ParseLayer(in); err != nil || l != want || (in != "" && !strings.EqualFold(l.String(), in)) {
			t.Errorf("ParseLayer(%q) = %v, %v", in, l, err)
		}
	}
	if _, err := ParseLayer("l3"); err == nil || !strings.Contains(err.Error(), "l1") {
		t.Errorf("ParseLayer(l3) error %v", err)
	}
}

func TestSplitExact(t *testing.T) {
	for _, s := range []string{"1Mpps", "1000pps", "10Gbps", "15fps", "7pps"} {
		r, _ := ParseRate(s)
		for w := 1; w <= 8; w++ {
			sum := 0.0
			for range w {
				sum += r.Split(w).FramesPerSecond(1500, L1)
			}
			if want := r.FramesPerSecond(1500, L1); math.Abs(sum-want) > 1e-12*want {
				t.Errorf("%s split %d ways sums to %v, want %v", s, w, sum, want)
			}
		}
	}
	r, _ := ParseRate("ifg=10us")
	if s := r.Split(4); !s.IFG() || s.FramesPerSecond(0, L2) != 25e3 || s.String() != "ifg=40µs" {
		t.Errorf("ifg=10us split 4 ways = %v (%v fps)", s, s.FramesPerSecond(0, L2))
	}
	cfg := r.Config(100, L2, 2)
	if !cfg.IFG || cfg.FPS != 50e3 {
		t.Errorf("Config = %+v", cfg)
	}
	if !(Rate{}).Split(3).Unlimited() {
		t.Error("unlimited split is not unlimited")
	}
}

func TestParseWait(t *testing.T) {
	for in, want := range map[string]WaitMode{"": Hybrid, "hybrid": Hybrid, "SPIN": Spin, "sleep": Sleep} {
		if w, err := ParseWait(in); err != nil || w != want {
			t.Errorf("ParseWait(%q) = %v, %v", in, w, err)
		}
	}
	for _, w := range []WaitMode{Spin, Sleep, Hybrid} {
		if got, _ := ParseWait(w.String()); got != w {
			t.Errorf("%v does not round-trip", w)
		}
	}
	if _, err := ParseWait("busy"); err == nil || !strings.Contains(err.Error(), "hybrid") {
		t.Errorf("ParseWait(busy) error %v", err)
	}
}
