package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wpg-dev/wpg/sysinfo"
)

// Readings are the evidence of how quiet the machine was during a matrix:
// what Run samples before, between and after the cells, and what the
// noise verdict (Judge) is drawn from. Zero means "not measured" for the
// optional ones (frequency, stalls).
type Readings struct {
	// Seconds is the span the counters cover.
	Seconds float64 `json:"seconds"`
	// CPUs is the number of CPUs the counters cover (/proc/stat).
	CPUs int `json:"cpus"`
	// StealShare is the share of all CPU time the hypervisor gave to
	// others (/proc/stat steal), 0..1.
	StealShare float64 `json:"steal_share"`
	// OtherCPUs is how many CPUs other processes kept busy on average:
	// the machine's busy time less this process's and its children's
	// (the receivers).
	OtherCPUs float64 `json:"other_cpus"`
	// LoadAvg is the 1-minute load average at the end.
	LoadAvg float64 `json:"load_avg"`
	// StallLostShare is the largest share of time a spinning thread lost
	// to stalls on a probed CPU (sysinfo --stalls, briefly, before and
	// after the cells); StallsPerSecond its stall rate; StallCPU that CPU.
	StallLostShare  float64 `json:"stall_lost_share"`
	StallsPerSecond float64 `json:"stalls_per_second"`
	StallCPU        int     `json:"stall_cpu"`
	// FreqMinMHz and FreqMaxMHz are the lowest and highest CPU clock seen
	// (cpufreq, else /proc/cpuinfo); 0 when the host shows none.
	FreqMinMHz float64 `json:"freq_min_mhz,omitempty"`
	FreqMaxMHz float64 `json:"freq_max_mhz,omitempty"`
	// Governor is cpu0's cpufreq governor ("" without cpufreq).
	Governor string `json:"governor,omitempty"`
	// Spread is the largest (max − min) / median of a row's repeats, and
	// SpreadRow names that row and size.
	Spread    float64 `json:"spread"`
	SpreadRow string  `json:"spread_row,omitempty"`
}

// Limits above which a reading makes the figures unreliable.
const (
	MaxSpread      = 0.10 // repeats of one cell 10 % apart
	MaxSteal       = 0.02 // 2 % of CPU time stolen by the hypervisor
	MaxOtherCPUs   = 0.25 // other processes busy a quarter of a CPU
	MaxStallLost   = 0.01 // a spinning thread lost 1 % of its time
	MaxFreqSwing   = 1.10 // the clock moved by more than 10 %
	verdictQuiet   = "quiet"
	verdictNoisy   = "noisy"
	verdictUnknown = "unknown"
)

// Noise is the verdict on a matrix's figures, with its evidence.
type Noise struct {
	// Verdict is "quiet" (the figures can be trusted), "noisy" (rerun on
	// a quiet machine) or "unknown" (nothing could be measured).
	Verdict string `json:"verdict"`
	// Reasons are the readings over their limit, in plain words with the
	// figure ("steal 6 %").
	Reasons []string `json:"reasons,omitempty"`
	// Summary is the one line the table prints.
	Summary  string   `json:"summary"`
	Readings Readings `json:"readings"`
}

// Reliable reports whether the verdict is quiet.
func (n Noise) Reliable() bool { return n.Verdict == verdictQuiet }

// Judge draws the verdict from r.
func Judge(r Readings) Noise {
	n := Noise{Readings: r}
	pct := func(v float64) string { return strconv.FormatFloat(v*100, 'f', 0, 64) + " %" }
	if r.Spread > MaxSpread {
		what := "spread " + pct(r.Spread)
		if r.SpreadRow != "" {
			what += " (" + r.SpreadRow + ")"
		}
		n.Reasons = append(n.Reasons, what)
	}
	if r.StealShare > MaxSteal {
		n.Reasons = append(n.Reasons, "steal "+pct(r.StealShare))
	}
	if r.OtherCPUs > MaxOtherCPUs {
		n.Reasons = append(n.Reasons, fmt.Sprintf("other processes kept %.1f of %d CPUs busy", r.OtherCPUs, r.CPUs))
	}
	if r.StallLostShare > MaxStallLost {
		n.Reasons = append(n.Reasons, fmt.Sprintf("CPU %d lost %s of its time to stalls (%.0f/s)", r.StallCPU, pct(r.StallLostShare), r.StallsPerSecond))
	}
	if r.FreqMinMHz > 0 && r.FreqMaxMHz > r.FreqMinMHz*MaxFreqSwing {
		what := fmt.Sprintf("CPU clock moved %.0f–%.0f MHz", r.FreqMinMHz, r.FreqMaxMHz)
		if r.Governor != "" && r.Governor != "performance" {
			what += " (governor " + r.Governor + ")"
		}
		n.Reasons = append(n.Reasons, what)
	}
	switch {
	case len(n.Reasons) > 0:
		n.Verdict = verdictNoisy
		n.Summary = strings.Join(n.Reasons, ", ") + ": rerun on a quiet machine"
	case r.Seconds == 0 && r.Spread == 0:
		n.Verdict = verdictUnknown
		n.Summary = "the machine's noise could not be measured"
	default:
		n.Verdict = verdictQuiet
		n.Summary = fmt.Sprintf("quiet: spread %s, steal %s, other load %.2f CPUs", pct(r.Spread), pct(r.StealShare), r.OtherCPUs)
	}
	return n
}

// hostSample is one reading of the machine's counters.
type hostSample struct {
	at                 time.Time
	total, busy, steal uint64 // /proc/stat "cpu" line, USER_HZ ticks over all CPUs
	own                uint64 // this process and its waited-for children, ticks
	cpus               int
	freqs              []float64
	ok                 bool
}

// sampler reads the counters below root ("/" for the machine; a fixture
// tree in tests).
type sampler struct {
	root string
	now  func() time.Time
}

func (s sampler) read(p string) (string, error) {
	b, err := os.ReadFile(filepath.Join(s.root, p))
	return string(b), err
}

// sample reads the counters; what cannot be read leaves ok false.
func (s sampler) sample() hostSample {
	h := hostSample{at: s.now()}
	st, err := s.read("proc/stat")
	if err != nil {
		return h
	}
	total, busy, steal, cpus, ok := parseProcStat(st)
	if !ok {
		return h
	}
	self, err := s.read("proc/self/stat")
	if err != nil {
		return h
	}
	own, ok := parseOwnTicks(self)
	if !ok {
		return h
	}
	h.total, h.busy, h.steal, h.cpus, h.own, h.ok = total, busy, steal, cpus, own, true
	h.freqs = s.freqs()
	return h
}

// freqs reads every CPU's current clock in MHz: cpufreq's
// scaling_cur_freq, else the "cpu MHz" lines of /proc/cpuinfo.
func (s sampler) freqs() []float64 {
	var out []float64
	paths, _ := filepath.Glob(filepath.Join(s.root, "sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_cur_freq"))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			if khz, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil && khz > 0 {
				out = append(out, khz/1000)
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	ci, err := s.read("proc/cpuinfo")
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(ci, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == "cpu MHz" {
			if mhz, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && mhz > 0 {
				out = append(out, mhz)
			}
		}
	}
	return out
}

func (s sampler) loadAvg() float64 {
	la, err := s.read("proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(la)
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

func (s sampler) governor() string {
	g, _ := s.read("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
	return strings.TrimSpace(g)
}

// parseProcStat takes the aggregate "cpu" line of /proc/stat: total ticks
// (user nice system idle iowait irq softirq steal; guest time is already
// in user), busy ticks (total less idle, iowait and steal), steal ticks, and the
// number of per-CPU lines.
func parseProcStat(s string) (total, busy, steal uint64, cpus int, ok bool) {
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if f[0] != "cpu" {
			cpus++
			continue
		}
		if len(f) < 9 {
			return 0, 0, 0, 0, false
		}
		var v [8]uint64
		for i := range v {
			n, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return 0, 0, 0, 0, false
			}
			v[i] = n
		}
		for _, n := range v {
			total += n
		}
		busy = total - v[3] - v[4] - v[7]
		steal = v[7]
		ok = true
	}
	return total, busy, steal, cpus, ok
}

// parseOwnTicks takes utime, stime, cutime and cstime (fields 14 to 17)
// of a /proc/PID/stat line, counted after the command name's last ')'.
func parseOwnTicks(s string) (uint64, bool) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 15 {
		return 0, false
	}
	var sum uint64
	for _, x := range f[11:15] { // fields 14..17; f[0] is field 3
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return 0, false
		}
		if n > 0 {
			sum += uint64(n)
		}
	}
	return sum, true
}

// between fills r's counter readings from the samples a (first) and b.
func between(r *Readings, a, b hostSample, freqs []float64) {
	if a.ok && b.ok && b.total > a.total {
		dt := float64(b.total - a.total)
		r.Seconds = b.at.Sub(a.at).Seconds()
		r.CPUs = b.cpus
		r.StealShare = float64(b.steal-min(b.steal, a.steal)) / dt
		busy := float64(b.busy - min(b.busy, a.busy))
		own := float64(b.own - min(b.own, a.own))
		if others := busy - own; others > 0 {
			r.OtherCPUs = others / dt * float64(max(b.cpus, 1))
		}
	}
	for _, f := range freqs {
		if r.FreqMinMHz == 0 || f < r.FreqMinMHz {
			r.FreqMinMHz = f
		}
		r.FreqMaxMHz = max(r.FreqMaxMHz, f)
	}
}

// probeStalls runs the stall probe for d on up to four of the CPUs this
// process may use and returns the worst.
func probeStalls(root string, d time.Duration) (lost, perSec float64, cpu int, err error) {
	st, err := os.ReadFile(filepath.Join(root, "proc/self/status"))
	if err != nil {
		return 0, 0, 0, err
	}
	cpus, err := sysinfo.ParseCPUList(sysinfo.ParseStatusField(string(st), "Cpus_allowed_list"))
	if err != nil || len(cpus) == 0 {
		return 0, 0, 0, fmt.Errorf("allowed CPUs: %v", err)
	}
	if len(cpus) > 4 {
		cpus = cpus[len(cpus)-4:] // the last ones: CPU 0 gathers housekeeping
	}
	res, err := sysinfo.ProbeStalls(cpus, d, 10*time.Microsecond)
	for _, s := range res {
		if s.LostShare >= lost {
			lost, perSec, cpu = s.LostShare, s.PerSecond, s.CPU
		}
	}
	return lost, perSec, cpu, err
}
