package membench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// Schema is the version tag of the JSON report.
const Schema = "wpg.membench/v1"

// System is the header of the report: where and when it ran.
type System struct {
	Date        string    `json:"date"`
	Host        string    `json:"host"`
	Kernel      string    `json:"kernel"`
	CPU         string    `json:"cpu"`
	Cores       int       `json:"cores"`
	MemoryBytes int64     `json:"memory_bytes"`
	Load        []float64 `json:"load_avg,omitempty"`
	THP         string    `json:"thp,omitempty"`
	GoVersion   string    `json:"go_version"`
}

// MethodInfo says whether a method ran and how.
type MethodInfo struct {
	Name        Method `json:"name"`
	Available   bool   `json:"available"`
	Reason      string `json:"reason,omitempty"`
	Description string `json:"description"`
}

// Iteration is one timed iteration of a cell.
type Iteration struct {
	// Ops is the number of operations (copies or reads of the whole
	// buffer) timed together.
	Ops   int64   `json:"ops"`
	Bytes int64   `json:"bytes"`
	Ns    int64   `json:"ns"`
	GBps  float64 `json:"gbps"`
}

// Result is one cell of the matrix: a method at a size.
type Result struct {
	Method Method `json:"method"`
	Size   int64  `json:"size"`
	// Iterations in order; the first is cold.
	Iterations []Iteration `json:"iterations"`
	// ColdGBps is iteration 1; WarmGBps the mean of iterations 2..N (0
	// with one iteration); BestGBps the fastest iteration. GB = 1e9 bytes.
	ColdGBps float64 `json:"cold_gbps"`
	WarmGBps float64 `json:"warm_gbps"`
	BestGBps float64 `json:"best_gbps"`
	// Checksum is the exporter's Sum64 of the buffer (hex).
	Checksum string `json:"checksum"`
	// Checked is the number of importer checksums compared with it;
	// Verified says all of them matched.
	Checked  int64 `json:"checked"`
	Verified bool  `json:"verified"`
	// Calls counts system calls per operation where the method makes them
	// (process_vm_readv, read on the pipe).
	CallsPerOp float64 `json:"calls_per_op,omitempty"`
	Error      string  `json:"error,omitempty"`
}

// Report is the outcome of Run.
type Report struct {
	Schema string  `json:"schema"`
	System System  `json:"system"`
	Sizes  []int64 `json:"sizes"`
	Iters  int     `json:"iters"`
	MinOps int64   `json:"min_bytes_per_warm_iteration"`
	Pinned bool    `json:"pinned"`
	THP    bool    `json:"thp_madvise"`
	Reader string  `json:"reader"`
	// Readers lists the in-place readers this CPU can run (--reader), best first.
	Readers []string     `json:"readers_available,omitempty"`
	Copy    string       `json:"copy"`
	PipeCap int          `json:"pipe_capacity,omitempty"`
	Methods []MethodInfo `json:"methods"`
	Results []Result     `json:"results"`
	// Verified is true when every cell that ran was verified.
	Verified bool `json:"verified"`
	// Interrupted is true when the context ended the run early (Ctrl-C,
	// SIGTERM): Results hold the cells that finished, the one under way
	// left out (it is not a failed verification).
	Interrupted bool `json:"interrupted,omitempty"`
}

// summarize fills the cold/warm/best figures from the iterations.
func (r *Result) summarize() {
	if len(r.Iterations) == 0 {
		return
	}
	r.ColdGBps = r.Iterations[0].GBps
	r.BestGBps = 0
	var sum float64
	for i, it := range r.Iterations {
		if it.GBps > r.BestGBps {
			r.BestGBps = it.GBps
		}
		if i > 0 {
			sum += it.GBps
		}
	}
	if n := len(r.Iterations) - 1; n > 0 {
		r.WarmGBps = sum / float64(n)
	}
}

// WriteJSON writes the report as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// result finds the cell for m at size.
func (rep *Report) result(m Method, size int64) *Result {
	for i := range rep.Results {
		if rep.Results[i].Method == m && rep.Results[i].Size == size {
			return &rep.Results[i]
		}
	}
	return nil
}

// WriteHeader writes the system header.
func (rep *Report) WriteHeader(w io.Writer) {
	s := rep.System
	fmt.Fprintln(w, "=== system ===")
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprintf(tw, "date:\t%s\n", s.Date)
	fmt.Fprintf(tw, "host:\t%s\n", s.Host)
	fmt.Fprintf(tw, "kernel:\t%s\n", s.Kernel)
	fmt.Fprintf(tw, "CPU:\t%s\n", s.CPU)
	fmt.Fprintf(tw, "cores:\t%d\n", s.Cores)
	fmt.Fprintf(tw, "memory:\t%.1f GiB\n", float64(s.MemoryBytes)/(1<<30))
	if len(s.Load) == 3 {
		fmt.Fprintf(tw, "load:\t%.2f %.2f %.2f (at start; other processes share the CPUs)\n", s.Load[0], s.Load[1], s.Load[2])
	}
	if s.THP != "" {
		how := "private buffers use 4 KiB pages unless the policy is always"
		if rep.THP {
			how = "private buffers madvise(MADV_HUGEPAGE)"
		}
		fmt.Fprintf(tw, "THP:\t%s (%s)\n", s.THP, how)
	}
	fmt.Fprintf(tw, "in-place read:\t%s\n", rep.Reader)
	if len(rep.Readers) > 0 {
		fmt.Fprintf(tw, "readers:\t%s (this CPU runs them: --reader)\n", strings.Join(rep.Readers, ", "))
	}
	fmt.Fprintf(tw, "copy:\t%s\n", rep.Copy)
	if rep.PipeCap > 0 {
		fmt.Fprintf(tw, "pipe:\t%d bytes capacity\n", rep.PipeCap)
	}
	pin := "unpinned"
	if rep.Pinned {
		pin = "importer and exporter pinned to different CPUs"
	}
	fmt.Fprintf(tw, "pinning:\t%s\n", pin)
	timing := "cold = iteration 1 (first touch of fresh buffers); warm = " + warmSpan(rep.Iters)
	if rep.MinOps > 0 {
		timing += fmt.Sprintf(", each repeating the operation until ≥ %s moved", FormatSize(rep.MinOps))
		if small := slices.ContainsFunc(rep.Sizes, func(s int64) bool { return (rep.MinOps+s-1)/s > MaxOpsPerIteration }); small {
			timing += fmt.Sprintf(" (at most %d times: sizes below %s move less)", MaxOpsPerIteration, FormatSize(rep.MinOps/MaxOpsPerIteration))
		}
	}
	timing += "; best = fastest iteration; GB/s = 1e9 bytes/s"
	fmt.Fprintf(tw, "timing:\t%s\n", timing)
	_ = tw.Flush()
	for _, m := range rep.Methods {
		if !m.Available {
			fmt.Fprintf(w, "%s: not available: %s\n", m.Name, m.Reason)
		}
	}
}

// WriteTable writes the header and the warm, cold and best tables.
func (rep *Report) WriteTable(w io.Writer) {
	rep.WriteHeader(w)
	var cols []Method
	for _, m := range rep.Methods {
		if m.Available {
			cols = append(cols, m.Name)
		}
	}
	if len(cols) == 0 {
		fmt.Fprintln(w, "\nno method could run on this machine")
		return
	}
	tables := []struct {
		title string
		pick  func(*Result) float64
	}{
		{fmt.Sprintf("warm bandwidth, GB/s (%s)", warmSpan(rep.Iters)), func(r *Result) float64 { return r.WarmGBps }},
		{"cold bandwidth, GB/s (iteration 1)", func(r *Result) float64 { return r.ColdGBps }},
		{"best bandwidth, GB/s", func(r *Result) float64 { return r.BestGBps }},
	}
	if rep.Iters < 2 {
		tables = tables[1:]
	}
	for _, tb := range tables {
		fmt.Fprintf(w, "\n=== %s ===\n", tb.title)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "size\t")
		for _, c := range cols {
			fmt.Fprintf(tw, "%s\t", c)
		}
		fmt.Fprintln(tw)
		for _, size := range rep.Sizes {
			fmt.Fprintf(tw, "%s\t", FormatSize(size))
			for _, c := range cols {
				r := rep.result(c, size)
				switch {
				case r == nil:
					fmt.Fprint(tw, "-\t")
				case r.Error != "":
					fmt.Fprint(tw, "error\t")
				case !r.Verified:
					fmt.Fprint(tw, "BAD DATA\t")
				default:
					fmt.Fprintf(tw, "%s\t", fmtGBps(tb.pick(r)))
				}
			}
			fmt.Fprintln(tw)
		}
		_ = tw.Flush()
	}
	var errs []string
	for _, r := range rep.Results {
		if r.Error != "" {
			errs = append(errs, fmt.Sprintf("%s %s: %s", r.Method, FormatSize(r.Size), r.Error))
		}
	}
	fmt.Fprintln(w)
	n := int64(0)
	for _, r := range rep.Results {
		n += r.Checked
	}
	switch {
	case rep.Verified && rep.Interrupted:
		fmt.Fprintf(w, "interrupted: the cells above finished (- for those that did not run); all %d of their importer checksums matched the exporter's\n", n)
	case rep.Verified:
		fmt.Fprintf(w, "verified: all %d importer checksums matched the exporter's\n", n)
	default:
		fmt.Fprintln(w, "verified: NO — see the errors below")
	}
	for _, e := range errs {
		fmt.Fprintln(w, "error: "+e)
	}
}

// warmSpan says which iterations the warm figures are the mean of.
func warmSpan(iters int) string {
	switch iters {
	case 1:
		return "none (--iters 1 times the cold iteration alone: give 2 or more)"
	case 2:
		return "iteration 2"
	}
	return fmt.Sprintf("mean of iterations 2..%d", iters)
}

// fmtGBps writes a rate with three decimals below 0.1 GB/s and two
// significant digits below 0.001, so that a slow cell (a few bytes a
// system call) does not read as 0.000.
func fmtGBps(v float64) string {
	switch {
	case v == 0 || math.IsNaN(v):
		return "-"
	case v < 0.001:
		return fmt.Sprintf("%.2g", v)
	case v < 0.1:
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
