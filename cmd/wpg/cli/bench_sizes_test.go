package cli

import (
	"strings"
	"testing"
)

// TestBenchSizesBelowAFrame: --sizes under 64 bytes is a usage error
// naming the flag, before the matrix starts.
func TestBenchSizesBelowAFrame(t *testing.T) {
	out, errs, code := runCLI(t, "bench", "--sizes", "1,64", "--quick")
	if code != ExitUsage || !strings.Contains(errs, "--sizes") || !strings.Contains(errs, "64 bytes") || out != "" {
		t.Errorf("exit %d, out %q, err %q; want %d and the 64-byte minimum", code, out, errs, ExitUsage)
	}
}

// TestBenchSizesGivenTwice: the same size written twice (64 and 64B) is a
// usage error naming both spellings; --repeat over 100 names the flag.
func TestBenchSizesGivenTwice(t *testing.T) {
	out, errs, code := runCLI(t, "bench", "--sizes", "64,1MiB,64B", "--quick")
	if code != ExitUsage || !strings.Contains(errs, `--sizes "64,1MiB,64B": 64 and 64B are the same size (64 B): give each size once`) || out != "" {
		t.Errorf("exit %d, out %q, err %q; want %d naming 64 and 64B", code, out, errs, ExitUsage)
	}
	if _, errs, code := runCLI(t, "bench", "--repeat", "101", "--quick"); code != ExitUsage || !strings.Contains(errs, "--repeat 101: give 1 to 100") {
		t.Errorf("--repeat 101: exit %d, err %q", code, errs)
	}
}

// TestIntervalFloor: an --interval under 50 ms is refused on send, bench
// and the matrix, as on recv: each period is a snapshot and a line or an
// intervals[] entry, so --interval 1ns took 200,000 a second and grew the
// report without bound (340 MB in 3 s).
func TestIntervalFloor(t *testing.T) {
	for _, args := range [][]string{
		{"send", "--backend", "null", "--duration", "1s", "--interval", "1ns"},
		{"bench", "--backend", "null", "--duration", "1s", "--interval", "10ms"},
		{"bench", "--quick", "--paths", "null", "--interval", "49ms"},
	} {
		out, errs, code := runCLI(t, args...)
		if code != ExitUsage || !strings.Contains(errs, "--interval") || !strings.Contains(errs, "give a period of 50ms or more") || out != "" {
			t.Errorf("%v: exit %d, out %q, err %q; want %d and the 50 ms floor", args, code, out, errs, ExitUsage)
		}
	}
}

// TestDmabufBenchSizesGivenTwice: dmabuf bench refuses a size written twice
// (1MiB and 1M), naming both spellings.
func TestDmabufBenchSizesGivenTwice(t *testing.T) {
	out, errs, code := runCLI(t, "dmabuf", "bench", "--sizes", "1MiB,1M")
	if code != ExitUsage || !strings.Contains(errs, `--sizes "1MiB,1M": 1MiB and 1M are the same size (1 MiB): give each size once`) || out != "" {
		t.Errorf("exit %d, out %q, err %q; want %d naming 1MiB and 1M", code, out, errs, ExitUsage)
	}
}

// TestSysinfoStallsBounded: --stalls takes at most 10 minutes per CPU.
func TestSysinfoStallsBounded(t *testing.T) {
	if _, errs, code := runCLI(t, "sysinfo", "--stalls", "10h"); code != ExitUsage || !strings.Contains(errs, "--stalls 10h0m0s: give how long to spin on each CPU, up to 10m0s") {
		t.Errorf("--stalls 10h: exit %d, %q", code, errs)
	}
}
