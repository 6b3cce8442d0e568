package bench

import (
	"fmt"
	"slices"
	"sort"

	"github.com/wpg-dev/wpg/units"
)

// summarise fills r's median, range, spread, unit and CPU per frame from
// its runs; failed runs count only for Error.
func summarise(r *Row) {
	var pps, bps, bits, cpu []float64
	for _, x := range r.Runs {
		if x.Error != "" {
			r.Error = x.Error
			if x.Frames == 0 {
				continue
			}
		}
		if x.Mode != "" {
			r.Mode = x.Mode
		}
		pps = append(pps, x.PPS)
		bps = append(bps, x.BytesPerSecond)
		bits = append(bits, x.BitsPerSecond)
		if x.Frames > 0 {
			cpu = append(cpu, x.CPUSeconds*1e9/float64(x.Frames))
		}
	}
	r.Unit = "B/s"
	if r.Group == Network || r.Backend == "null" {
		r.Unit = "bit/s"
	}
	if len(pps) == 0 {
		return
	}
	r.PPS = median(pps)
	r.MinPPS, r.MaxPPS = slices.Min(pps), slices.Max(pps)
	if r.PPS > 0 {
		r.Spread = (r.MaxPPS - r.MinPPS) / r.PPS
	}
	r.BytesPerSecond = median(bps)
	if r.Unit == "bit/s" {
		r.BitsPerSecond = median(bits)
	}
	if len(cpu) > 0 {
		r.CPUNsPerFrame = median(cpu)
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// rank sorts t's rows fastest first, numbers them, sets each row's ratio
// to its reference and writes the table's advice.
func rank(t *Table) {
	sort.SliceStable(t.Rows, func(i, j int) bool { return t.Rows[i].PPS > t.Rows[j].PPS })
	ref := map[string]float64{}
	for _, r := range t.Rows {
		if r.Group == Reference {
			ref[r.Backend] = r.PPS
		}
	}
	for i := range t.Rows {
		r := &t.Rows[i]
		r.Rank = i + 1
		switch r.Group {
		case Reference:
			r.Ratio = 1
		case Local:
			r.Reference = "memcpy"
		case Network:
			r.Reference = "null"
		}
		if r.Reference != "" && ref[r.Reference] > 0 {
			r.Ratio = r.PPS / ref[r.Reference]
		}
	}
	t.Advice = advice(*t)
}

// advice is a table's line: the fastest local path against the everyday
// baseline (unix), and the fastest network variant against plain afpacket
// (or the runner-up when that is the fastest).
func advice(t Table) string {
	size := units.FormatSize(t.Size)
	var out string
	var best, unix *Row
	for i := range t.Rows {
		r := &t.Rows[i]
		if r.Group != Local || r.PPS == 0 {
			continue
		}
		if best == nil {
			best = r
		}
		if r.Backend == "unix" {
			unix = r
		}
	}
	if best != nil {
		out = fmt.Sprintf("for %s frames between two processes on this host: %s", size, describe(best.Path))
		switch {
		case unix != nil && unix != best:
			out += fmt.Sprintf(", %.1f× unix", best.PPS/unix.PPS)
		case unix == best:
			if second := nextLocal(t, best); second != nil {
				out += fmt.Sprintf(", %.2f× %s", best.PPS/second.PPS, describe(second.Path))
			}
		}
		if best.Ratio > 0 {
			out += fmt.Sprintf(" (%.2f× memcpy)", best.Ratio)
		}
	}
	// The fastest network variant against plain afpacket, the everyday
	// baseline (as unix is for the local paths), or, when afpacket is the
	// fastest, against the runner-up.
	var fast, base, second *Row
	for i := range t.Rows {
		r := &t.Rows[i]
		if r.Group != Network || r.PPS == 0 {
			continue
		}
		switch {
		case fast == nil:
			fast = r
		case second == nil:
			second = r
		}
		if r.Path == "afpacket" {
			base = r
		}
	}
	if base == nil || base == fast {
		base = second
	}
	if fast != nil {
		line := fmt.Sprintf("for %s packets on veth: %s", size, fast.Path)
		if base != nil {
			line += fmt.Sprintf(", %.2f× %s", fast.PPS/base.PPS, base.Path)
		}
		if fast.Ratio > 0 {
			line += fmt.Sprintf(" (%.2f× the generator alone)", fast.Ratio)
		}
		if out != "" {
			out += "; "
		}
		out += line
	}
	return out
}

func nextLocal(t Table, after *Row) *Row {
	seen := false
	for i := range t.Rows {
		r := &t.Rows[i]
		if r == after {
			seen = true
			continue
		}
		if seen && r.Group == Local && r.PPS > 0 {
			return r
		}
	}
	return nil
}

// describe names a row in words where the flag is not obvious.
func describe(path string) string {
	switch path {
	case "shm":
		return "shm in place"
	case "shm --recv-mode copy":
		return "shm copied out"
	}
	return path
}
