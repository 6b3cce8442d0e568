package job

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wpg-dev/wpg/engine"
	"github.com/wpg-dev/wpg/sysinfo"
)

// chooseCores turns Cores or AutoPin into one CPU per worker, or nil for
// no pinning.
func chooseCores(s Spec, allowed []int) ([]int, error) {
	switch {
	case s.Cores != "" && s.AutoPin:
		return nil, &OptionError{Field: "cores", Reason: "and {auto_pin} each choose the workers' CPUs", Fix: "give only one of them"}
	case s.Cores != "":
		// Bounded by the allowed CPUs before a range is expanded, so that
		// 0-99999999 fails at once instead of filling memory.
		// One CPU is checked against the allowed ones by number.
		list, err := sysinfo.ParseCPUListMax(s.Cores, slices.Max(append([]int{0}, allowed...)))
		if n, aerr := strconv.Atoi(s.Cores); aerr == nil && n >= 0 {
			list, err = []int{n}, nil
		}
		if err != nil || len(list) == 0 {
			why := "write a list of CPUs such as 2,3 or 2-5"
			if err != nil {
				why = err.Error() + "; " + why
			}
			return nil, &OptionError{Field: "cores", Value: s.Cores, Reason: fmt.Sprintf("%s, from the CPUs this process may use (%s)", why, FormatCPUList(allowed)), Err: err}
		}
		seen := map[int]bool{}
		for _, c := range list {
			if seen[c] {
				return nil, &OptionError{Field: "cores", Value: s.Cores, Reason: fmt.Sprintf("names CPU %d twice", c), Fix: fmt.Sprintf("give each worker its own CPU (allowed: %s)", FormatCPUList(allowed))}
			}
			seen[c] = true
		}
		if len(list) < s.Workers {
			return nil, &OptionError{Field: "cores", Value: s.Cores, Reason: fmt.Sprintf("names %d CPUs for %d workers", len(list), s.Workers), Fix: "name one per worker"}
		}
		list = list[:s.Workers]
		if err := engine.CheckCores(list, allowed); err != nil {
			return nil, &OptionError{Field: "cores", Value: s.Cores, Err: err, Reason: err.Error()}
		}
		return list, nil
	case s.AutoPin:
		var nodeCPUs []int
		if s.Interface != "" {
			nodeCPUs = sysinfo.HostFS().IfaceCPUs(s.Interface)
		}
		return engine.AutoCores(allowed, nodeCPUs, s.Workers)
	}
	return nil, nil
}

// FormatCPUList writes CPUs in the kernel's list format: "0-3,8".
func FormatCPUList(cpus []int) string {
	c := slices.Clone(cpus)
	slices.Sort(c)
	var b strings.Builder
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", c[i], c[j])
		} else {
			fmt.Fprintf(&b, "%d", c[i])
		}
		i = j + 1
	}
	return b.String()
}
