package units

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "4096": 4096, "4096B": 4096, " 64 KiB ": 64 << 10, "64K": 64 << 10, "64k": 64 << 10, "64Ki": 64 << 10,
		"1KB": 1000, "1kB": 1000, "1MB": 1e6, "16MB": 16e6, "1GB": 1e9, "1TB": 1e12, "1PB": 1e15,
		"1MiB": 1 << 20, "1M": 1 << 20, "1G": 1 << 30, "1GiB": 1 << 30, "2TiB": 2 << 40, "1PiB": 1 << 50,
		"1.5KiB": 1536, "0.5M": 512 << 10, "2.5KB": 2500, "5.": 5, ".5K": 512,
		"8191PiB": 8191 << 50, "9223372036854775807": 1<<63 - 1,
	} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

func TestParseSizeErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":                      "not a size",
		"-5":                    "not a size",
		"abc":                   "not a size",
		"1e3":                   `unknown unit "e3"`,
		"0x10":                  `unknown unit "x10"`,
		"12 parsecs":            `unknown unit "parsecs"`,
		"1KiBB":                 `unknown unit "KiBB"`,
		"1.1.1":                 `unknown unit ".1"`,
		"0.3":                   "not a whole number",
		"1.0001KB":              "not a whole number",
		"99999999999999999999":  "too large: the largest is 9223372036854775807 bytes",
		"8192PiB":               "too large",
		"9223372036854775808":   "too large",
		strings.Repeat("9", 65): "characters long",
	} {
		_, err := ParseSize(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSize(%q): %v; want an error with %q", in, err, want)
		}
	}
	if _, err := ParseSizeIn("2GiB", 64, 1<<30); err == nil || !strings.Contains(err.Error(), "the largest is 1 GiB (1073741824 bytes)") {
		t.Errorf("above the range: %v", err)
	}
	if _, err := ParseSizeIn("32", 64, 1<<30); err == nil || !strings.Contains(err.Error(), "the smallest is 64 bytes") {
		t.Errorf("below the range: %v", err)
	}
	if _, err := ParseSizeIn("0", 1, 1<<30); err == nil || !strings.Contains(err.Error(), "the smallest is 1 byte") || strings.Contains(err.Error(), "1 bytes") {
		t.Errorf("below a range from 1: %v", err)
	}
}

func TestParseCount(t *testing.T) {
	for in, want := range map[string]uint64{"0": 0, "3": 3, "100k": 100e3, "100K": 100e3, "2.5M": 2.5e6, "1G": 1e9, "1T": 1e12, "18446744073709551615": 1<<64 - 1} {
		if got, err := ParseCount(in, 1<<64-1); err != nil || got != want {
			t.Errorf("ParseCount(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, want := range map[string]string{"-5": "not a count", "1.5": "not a whole number", "1Ki": "unknown suffix", "18446744073709551616": "the largest is 18446744073709551615", "2k": "the largest is 1000"} {
		max := uint64(1<<64 - 1)
		if in == "2k" {
			max = 1000
		}
		if _, err := ParseCount(in, max); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCount(%q): %v; want an error with %q", in, err, want)
		}
	}
}

// Every formatted size parses back to itself.
func TestFormatSizeRoundTrip(t *testing.T) {
	for _, n := range []int64{0, 1, 1000, 1024, 1500, 4096, 1000032, 16 << 20, 1e6, 1e9, 1 << 30, 3 << 40, 1e15, 1 << 50, 1<<63 - 1} {
		for _, f := range []func(int64) string{FormatSize, FormatSizeShort} {
			s := f(n)
			if got, err := ParseSize(s); err != nil || got != n {
				t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, n)
			}
		}
	}
}

// TestParseSizeOfConfig: the sizes wpg.toml and the size flags read
// (moved from the config package, whose ParseSize was this one).
func TestParseSizeOfConfig(t *testing.T) {
	// the units package's rule: KB = 1000, KiB = K = 1024
	for in, want := range map[string]int64{"4096": 4096, "16MiB": 16 << 20, "256M": 256 << 20, "1GiB": 1 << 30, "10KB": 10000, "2 KiB": 2048, "1.5MiB": 3 << 19} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "abc", "-5", "5XB", "0.5"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) must fail", bad)
		}
	}
}

func TestFormatCount(t *testing.T) {
	for n, want := range map[uint64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", 18446744073709551615: "18,446,744,073,709,551,615"} {
		if got := FormatCount(n, ","); got != want {
			t.Errorf("FormatCount(%d) = %q, want %q", n, got, want)
		}
	}
}
