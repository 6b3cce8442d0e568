package bench

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/wpg-dev/wpg/report"
	"github.com/wpg-dev/wpg/units"
)

// TableHeader is the column line of every ranked table WriteTable prints.
var TableHeader = []string{"#", "path", "frames/s", "rate", "ratio", "spread", "cpu/frame", "mode"}

// WriteTable writes r for humans: a ranked table per size with its
// advice, the rows skipped and why, the noise verdict, and the notes.
func (r *Result) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "wpg bench: %d run(s) of %v per cell, median (min–max)\n", r.Repeat, durationString(r.DurationSeconds))
	for _, t := range r.Tables {
		fmt.Fprintf(w, "\n%s frames\n", units.FormatSize(t.Size))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for i, h := range TableHeader {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, h)
		}
		fmt.Fprintln(tw)
		for _, row := range t.Rows {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", row.Rank, row.Path, report.SI(row.PPS, ""), rateString(row),
				ratioString(row), spreadString(row), cpuString(row.CPUNsPerFrame), modeString(row))
		}
		tw.Flush()
		if t.Advice != "" {
			fmt.Fprintf(w, "advice: %s\n", t.Advice)
		}
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintln(w)
		for _, s := range r.Skipped {
			at := ""
			if s.Size > 0 {
				at = " at " + units.FormatSize(s.Size)
			}
			fmt.Fprintf(w, "skipped: %s%s: %s\n", s.Path, at, s.Reason)
		}
	}
	fmt.Fprintf(w, "\nnoise: %s\n", r.Noise.Summary)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if r.Interrupted {
		fmt.Fprintln(w, "note: interrupted: the tables hold the runs that finished")
	}
	if p := r.Provenance; p != nil {
		fmt.Fprintf(w, "run: %s on %s, %s\n", p.Start, p.Host, p.Version)
	}
}

func durationString(s float64) string {
	return fmt.Sprintf("%gs", s)
}

func rateString(r Row) string {
	if r.Unit == "bit/s" {
		return report.SI(r.BitsPerSecond, "bit/s")
	}
	return report.SI(r.BytesPerSecond, "B/s")
}

func ratioString(r Row) string {
	switch {
	case r.Group == Reference:
		return "reference"
	case r.Ratio == 0:
		return "-"
	}
	return fmt.Sprintf("%.2f× %s", r.Ratio, r.Reference)
}

func spreadString(r Row) string {
	if len(r.Runs) < 2 {
		return "-"
	}
	return fmt.Sprintf("%.0f %% (%s–%s)", r.Spread*100, report.SI(r.MinPPS, ""), report.SI(r.MaxPPS, ""))
}

func cpuString(ns float64) string {
	switch {
	case ns == 0:
		return "-"
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

func modeString(r Row) string {
	if e := []rune(r.Error); len(e) > 0 {
		if len(e) > 70 {
			e = append(e[:69], '…')
		}
		return "error: " + string(e)
	}
	return r.Mode
}
