package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wpg-dev/wpg/cmd/wpg/cli/chart"
)

func init() { register(newPlotCmd) }

func newPlotCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "plot REPORT.json",
		Short: "draw a report: rate over time, lateness or latency by percentile, a matrix's ranking, RFC 2544 figures per size (SVG or PNG)",
		Long: `plot reads the JSON of wpg bench, send or recv (--json; "-" reads standard input) and draws it into
one picture, its format from the -o file name (.svg or .png): for a matrix (wpg bench without --backend) a bar
chart of each size's ranking. A run with --interval (send, bench, recv, a matrix's paths) is drawn over time,
a panel for each figure its intervals carry: the rate; with a receiver the frames lost (and corrupted) per
second and the one-way latency p99; for a paced run (--rate) the lateness p99 of its grants. Then, by
percentile, a paced run's lateness and the receiver's one-way latency. An RFC 2544 report (wpg ndr --json) is
drawn per frame size: the throughput, and where --latency and --back-to-back ran, the latency at the
throughput (min, p50, p99, max) and the longest burst without loss.`,
		Example: `  wpg bench --quick --json > matrix.json && wpg plot matrix.json -o matrix.svg
  wpg send --backend shm --size 1MiB --duration 10s --interval 1s --json > run.json && wpg plot run.json -o run.png`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPlot(cmd, args[0], out)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "picture to write: FILE.svg or FILE.png (required)")
	return cmd
}

func runPlot(cmd *cobra.Command, in, out string) error {
	if out == "" {
		return fmt.Errorf("plot: -o/--output FILE.svg|FILE.png is needed")
	}
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(out)), ".")
	if format != "svg" && format != "png" {
		return fmt.Errorf("plot: -o %s: the picture's format comes from its name: end it in .svg or .png", out)
	}
	r, err := openInput(cmd, in)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, chart.MaxInput+1))
	if err != nil {
		return fmt.Errorf("plot: read %s: %w", in, err)
	}
	plots, err := chart.Plots(b)
	if err != nil {
		return fmt.Errorf("plot: %s: %w", in, err)
	}
	markStarted(cmd)
	var buf bytes.Buffer
	if err := chart.Render(&buf, format, plots); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}
