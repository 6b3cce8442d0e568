package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestJudge drives the verdict with injected readings: each reading over
// its limit is named with its figure, a quiet machine is called quiet.
func TestJudge(t *testing.T) {
	for _, c := range []struct {
		name    string
		r       Readings
		verdict string
		want    []string
	}{
		{"quiet", Readings{Seconds: 60, CPUs: 8, Spread: 0.03, StealShare: 0.001, OtherCPUs: 0.05}, "quiet", []string{"quiet: spread 3 %"}},
		{"spread and steal", Readings{Seconds: 60, CPUs: 2, Spread: 0.38, SpreadRow: "shm at 1 MiB", StealShare: 0.06}, "noisy",
			[]string{"spread 38 % (shm at 1 MiB)", "steal 6 %", "rerun on a quiet machine"}},
		{"other load", Readings{Seconds: 60, CPUs: 2, OtherCPUs: 1.4}, "noisy", []string{"other processes kept 1.4 of 2 CPUs busy"}},
		{"stalls", Readings{Seconds: 60, CPUs: 2, StallLostShare: 0.05, StallsPerSecond: 900, StallCPU: 1}, "noisy", []string{"CPU 1 lost 5 % of its time to stalls (900/s)"}},
		{"clock", Readings{Seconds: 60, CPUs: 2, FreqMinMHz: 1200, FreqMaxMHz: 3600, Governor: "powersave"}, "noisy", []string{"CPU clock moved 1200–3600 MHz (governor powersave)"}},
		{"steady clock", Readings{Seconds: 60, CPUs: 2, FreqMinMHz: 2400, FreqMaxMHz: 2450}, "quiet", nil},
		{"nothing measured", Readings{}, "unknown", []string{"could not be measured"}},
	} {
		n := Judge(c.r)
		if n.Verdict != c.verdict || n.Reliable() != (c.verdict == "quiet") {
			t.Errorf("%s: verdict %q, want %q (%s)", c.name, n.Verdict, c.verdict, n.Summary)
		}
		for _, w := range c.want {
			if !strings.Contains(n.Summary, w) {
				t.Errorf("%s: summary %q lacks %q", c.name, n.Summary, w)
			}
		}
		if (c.verdict == "noisy") != (len(n.Reasons) > 0) {
			t.Errorf("%s: reasons %v for verdict %s", c.name, n.Reasons, n.Verdict)
		}
	}
}

func row(path, be string, g Group, pps ...float64) *Row {
	r := &Row{Path: path, Backend: be, Group: g}
	for _, p := range pps {
		r.Runs = append(r.Runs, RunResult{PPS: p, BytesPerSecond: p * 1000, BitsPerSecond: p * 8000, Frames: uint64(p), Seconds: 1, CPUSeconds: 0.5})
	}
	summarise(r)
	return r
}

// TestRankRatiosAdvice: rows are ranked by their median, local rows are
// compared with memcpy and network rows with null, and the advice names
// the fastest local path against unix.
func TestRankRatiosAdvice(t *testing.T) {
	tb := Table{Size: 1 << 20}
	for _, r := range []*Row{
		row("unix", "unix", Local, 100, 110, 90),
		row("memcpy", "memcpy", Reference, 1000, 1000, 1000),
		row("shm", "shm", Local, 230, 240, 220),
		row("pipe", "pipe", Local, 50, 200, 60),
	} {
		tb.Rows = append(tb.Rows, *r)
	}
	rank(&tb)
	var order []string
	for i, r := range tb.Rows {
		order = append(order, r.Path)
		if r.Rank != i+1 {
			t.Errorf("row %s rank %d at %d", r.Path, r.Rank, i)
		}
	}
	if got := strings.Join(order, ","); got != "memcpy,shm,unix,pipe" {
		t.Fatalf("order %s", got)
	}
	shm := tb.Rows[1]
	if shm.Ratio != 0.23 || shm.Reference != "memcpy" || shm.PPS != 230 || shm.MinPPS != 220 || shm.MaxPPS != 240 {
		t.Errorf("shm row %+v", shm)
	}
	if p := tb.Rows[3]; p.PPS != 60 || p.Spread != 150.0/60 {
		t.Errorf("pipe median/spread %v %v", p.PPS, p.Spread)
	}
	if want := "for 1 MiB frames between two processes on this host: shm in place, 2.3× unix (0.23× memcpy)"; tb.Advice != want {
		t.Errorf("advice %q, want %q", tb.Advice, want)
	}
	if tb.Rows[0].CPUNsPerFrame != 0.5e9/1000 {
		t.Errorf("cpu/frame %v", tb.Rows[0].CPUNsPerFrame)
	}

	net := Table{Size: 64}
	for _, r := range []*Row{
		row("null", "null", Reference, 1000),
		row("afpacket", "afpacket", Network, 100),
		row("afpacket --qdisc-bypass", "afpacket", Network, 130),
	} {
		net.Rows = append(net.Rows, *r)
	}
	rank(&net)
	if r := net.Rows[1]; r.Path != "afpacket --qdisc-bypass" || r.Ratio != 0.13 || r.Reference != "null" || r.Unit != "bit/s" {
		t.Errorf("network row %+v", r)
	}
	if !strings.Contains(net.Advice, "for 64 B packets on veth: afpacket --qdisc-bypass, 1.30× afpacket") {
		t.Errorf("network advice %q", net.Advice)
	}
	// afxdp first: against plain afpacket, not the slowest variant.
	net.Rows = append(net.Rows, *row("afxdp", "afxdp", Network, 150), *row("afpacket --batch 1", "afpacket", Network, 50))
	rank(&net)
	if !strings.Contains(net.Advice, "for 64 B packets on veth: afxdp, 1.50× afpacket (") {
		t.Errorf("network advice with afxdp %q", net.Advice)
	}
	// plain afpacket the fastest: against the runner-up.
	only := Table{Size: 64}
	for _, r := range []*Row{row("afpacket", "afpacket", Network, 120), row("afpacket --qdisc-bypass", "afpacket", Network, 100)} {
		only.Rows = append(only.Rows, *r)
	}
	rank(&only)
	if !strings.Contains(only.Advice, "for 64 B packets on veth: afpacket, 1.20× afpacket --qdisc-bypass") {
		t.Errorf("network advice, afpacket fastest: %q", only.Advice)
	}
}

// TestFailedRunKeepsTheOthers: a row whose run failed keeps the rate of
// the runs that did not and says why.
func TestFailedRunKeepsTheOthers(t *testing.T) {
	r := &Row{Path: "cma", Backend: "cma", Group: Local, Runs: []RunResult{{PPS: 10, Frames: 10, Seconds: 1}, {Error: "boom"}}}
	summarise(r)
	if r.PPS != 10 || r.Error != "boom" {
		t.Fatalf("%+v", r)
	}
}

func TestSamplerFixture(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stat := func(user, idle, steal int) string {
		return "cpu  " + itoa(user) + " 0 0 " + itoa(idle) + " 0 0 0 " + itoa(steal) + " 0 0\ncpu0 1 0 0 1 0 0 0 0 0 0\ncpu1 1 0 0 1 0 0 0 0 0 0\nintr 5\n"
	}
	self := func(ticks int) string {
		return "77 (wpg x) R 1 1 1 0 -1 0 0 0 0 0 " + itoa(ticks) + " 0 0 0 20 0 1 0 100 0 0\n"
	}
	write("proc/stat", stat(100, 100, 0))
	write("proc/self/stat", self(10))
	write("proc/cpuinfo", "processor\t: 0\ncpu MHz\t\t: 2400.000\nprocessor\t: 1\ncpu MHz\t\t: 2600.5\n")
	s := sampler{root: root, now: func() (z timeT) { return }}
	a := s.sample()
	if !a.ok || a.cpus != 2 || a.total != 200 || a.busy != 100 || a.own != 10 || len(a.freqs) != 2 || a.freqs[1] != 2600.5 {
		t.Fatalf("first sample %+v", a)
	}
	// 200 more ticks: 130 busy (10 of them ours), 20 stolen, 50 idle.
	write("proc/stat", stat(230, 150, 20))
	write("proc/self/stat", self(20))
	b := s.sample()
	var r Readings
	between(&r, a, b, append(a.freqs, b.freqs...))
	if r.StealShare != 20.0/200 || r.OtherCPUs != (130.0-10)/200*2 || r.FreqMinMHz != 2400 || r.FreqMaxMHz != 2600.5 {
		t.Fatalf("readings %+v", r)
	}
}

type timeT = time.Time

func itoa(n int) string { return strconv.Itoa(n) }
