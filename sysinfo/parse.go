package sysinfo

import (
	"fmt"
	"strconv"
	"strings"
)

// CPUInfo is what ParseCPUInfo extracts from /proc/cpuinfo.
type CPUInfo struct {
	Model      string          // "model name" of the first processor
	Processors int             // number of "processor" entries
	Cores      int             // unique (physical id, core id) pairs; Processors when absent
	Flags      map[string]bool // flags of the first processor
}

// ParseCPUInfo parses the text of /proc/cpuinfo (x86 and arm64 layouts).
func ParseCPUInfo(s string) CPUInfo {
	ci := CPUInfo{Flags: map[string]bool{}}
	cores := map[string]bool{}
	var phys, core string
	first := true
	flush := func() {
		if core != "" {
			cores[phys+"/"+core] = true
		}
		phys, core = "", ""
	}
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "processor":
			if ci.Processors > 0 {
				first = false
				flush()
			}
			ci.Processors++
		case "model name", "Model":
			if first && ci.Model == "" {
				ci.Model = v
			}
		case "physical id":
			phys = v
		case "core id":
			core = v
		case "flags", "Features":
			if first {
				for _, f := range strings.Fields(v) {
					ci.Flags[f] = true
				}
			}
		}
	}
	flush()
	ci.Cores = len(cores)
	if ci.Cores == 0 {
		ci.Cores = ci.Processors
	}
	return ci
}

// MaxCPU is the highest CPU number ParseCPUList accepts, above the
// kernel's largest NR_CPUS (8192), so that no list expands without bound.
const MaxCPU = 1<<16 - 1

// ParseCPUList parses the kernel's list format ("0-3,8,10-11") into
// ascending numbers, each at most MaxCPU.
func ParseCPUList(s string) ([]int, error) { return ParseCPUListMax(s, MaxCPU) }

// ParseCPUListMax is ParseCPUList for CPUs 0 to maxCPU: a number outside
// that is an error, found before any range is expanded (user input such
// as "0-99999999" costs nothing).
func ParseCPUListMax(s string, maxCPU int) ([]int, error) {
	s = strings.TrimSpace(s)
	var out []int
	if s == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("CPU list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("CPU list %q: %w", s, err)
			}
		}
		if b < a {
			return nil, fmt.Errorf("CPU list %q: range %d-%d runs backwards", s, a, b)
		}
		if a < 0 || b > maxCPU {
			return nil, fmt.Errorf("CPU list %q: %q is outside CPUs 0-%d", s, part, maxCPU)
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	return out, nil
}

// ParseStatusField returns the value of a "Key:\tvalue" line of
// /proc/PID/status, or "".
func ParseStatusField(s, key string) string {
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// ParseLimit returns the soft limit of the named row of /proc/PID/limits
// ("Max locked memory"), -1 for unlimited.
func ParseLimit(s, name string) (int64, bool) {
	for _, line := range strings.Split(s, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 1 {
			return 0, false
		}
		if f[0] == "unlimited" {
			return -1, true
		}
		v, err := strconv.ParseInt(f[0], 10, 64)
		return v, err == nil
	}
	return 0, false
}
