//go:build linux

package membench

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/wpg-dev/wpg/internal/sys"
)

// systemInfo gathers the header: date, host, kernel, CPU, cores, memory.
func systemInfo() System {
	rel, host := sys.Uname()
	s := System{
		Date:      time.Now().Format("Mon Jan _2 15:04:05 MST 2006"),
		Host:      host,
		Kernel:    rel,
		Cores:     runtime.NumCPU(),
		GoVersion: runtime.Version(),
	}
	if cpus, err := sys.AllowedCPUs(); err == nil && len(cpus) > 0 {
		s.Cores = len(cpus)
	}
	s.CPU = cpuModel(readFile("/proc/cpuinfo"))
	s.MemoryBytes = meminfo(readFile("/proc/meminfo"), "MemTotal")
	s.Load = loadavg(readFile("/proc/loadavg"))
	s.THP = strings.TrimSpace(readFile("/sys/kernel/mm/transparent_hugepage/enabled"))
	return s
}

func memAvailable() int64 { return meminfo(readFile("/proc/meminfo"), "MemAvailable") }

func readFile(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return string(b)
}

// cpuModel returns the first "model name" of /proc/cpuinfo.
func cpuModel(cpuinfo string) string {
	sc := bufio.NewScanner(strings.NewReader(cpuinfo))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// meminfo returns a /proc/meminfo field in bytes, 0 when missing.
func meminfo(text, key string) int64 {
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != key {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			return 0
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		return n
	}
	return 0
}

func loadavg(text string) []float64 {
	f := strings.Fields(text)
	if len(f) < 3 {
		return nil
	}
	out := make([]float64, 3)
	for i := range out {
		out[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return out
}
