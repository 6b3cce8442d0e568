package job

import (
	"errors"
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
			why := "is not a list of CPUs"
			var ne *strconv.NumError
			if err != nil && !errors.As(err, &ne) { // a range backwards, a CPU past the last: say which
				why += " (" + err.Error() + ")"
			}
			return nil, &OptionError{Field: "cores", Value: s.Cores, Reason: why, Err: err,
				Fix: fmt.Sprintf("write CPUs such as 2,3 or 2-5, from those this process may use (%s)", FormatCPUList(allowed))}
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
			why := err.Error()
			for _, c := range list {
				if !slices.Contains(allowed, c) {
					why = fmt.Sprintf("names CPU %d, which this process may not use", c)
					break
				}
			}
			return nil, &OptionError{Field: "cores", Value: s.Cores, Err: err, Reason: why,
				Fix: fmt.Sprintf("choose from the CPUs allowed to this process (%s)", FormatCPUList(allowed))}
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
