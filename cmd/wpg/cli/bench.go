package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wpg-dev/wpg/bench"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/report"
	"github.com/wpg-dev/wpg/sysinfo"
	"github.com/wpg-dev/wpg/units"
)

func init() { register(newBenchCmd) }

// matrixFlags are bench's flags for the matrix (no --backend).
type matrixFlags struct {
	sizes string
	quick bool
	paths string
}

// matrixOK are the flags the matrix reads; any other run flag belongs to
// one path and needs --backend.
var matrixOK = []string{"duration", "json", "sizes", "repeat", "quick", "paths", "interval", "config"}

func newBenchCmd() *cobra.Command {
	f := &runFlags{}
	m := &matrixFlags{}
	cmd := &cobra.Command{
		Use:   "bench [TEMPLATE.wpg.yaml]",
		Short: "rank every data path this host can run (the matrix), or measure one backend's highest rate",
		Long: `bench without --backend (and without -i or a template) runs the matrix: every data path this host can
run, at 64 B and at 1 MiB (--sizes), each with its tuned defaults and the variants that matter (pipe and
pipe --vmsplice, shm in place and copied out, afpacket with and without --qdisc-bypass), next to the null
generator and memcpy as references, --repeat times each (3). It prints one ranked table per size: rate,
ratio to the reference (memcpy for local paths, null for network paths), the repeats' spread, CPU per frame,
and a line of advice, and a noise verdict: steal time, load from other processes, CPU stalls, clock changes
and the spread, with the evidence when the figures cannot be trusted. Without privileges it runs the local
paths; as root it also creates a private network namespace with a veth pair for the network rows and
removes it at the end (and the ones a killed wpg left behind). About a minute; --quick under 30 s.

With --backend (or -i, or a template) bench sends flat out (unless --rate is given) for --duration (10 s)
with --batch 256 and reports the rate reached; --repeat N runs it N times and reports the median and the
range. --backend null measures the generator itself (the embedded 64-byte UDP template, no privileges).
Local paths (pipe, shm, cma, unix) start their own receiver.`,
		Example: `  wpg bench
  wpg bench --quick --json > matrix.json
  wpg bench --sizes 64,460800,64MiB --repeat 5
  wpg bench --backend null
  wpg bench --backend afpacket -i veth0 --qdisc-bypass
  wpg bench --backend shm --size 1MiB --duration 5s --interval 1s`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tpl := ""
			if len(args) == 1 {
				tpl = args[0]
			}
			if f.backend == "" && f.iface == "" && tpl == "" {
				return runMatrix(cmd, f, m)
			}
			for _, name := range []string{"sizes", "quick", "paths"} {
				if changed(cmd, name) != nil {
					return fmt.Errorf("--%s belongs to the matrix (bench without --backend): drop it, or drop --backend/-i/the template to run the matrix", name)
				}
			}
			return runJob(cmd, f, "bench", tpl)
		},
	}
	addRunFlags(cmd, f, true)
	addReportFlags(cmd, f)
	fl := cmd.Flags()
	fl.StringVar(&m.sizes, "sizes", "64,1MiB", "matrix: frame sizes, one ranked table each (comma-separated; 1KB = 1000, 1KiB = 1024)")
	fl.IntVar(&f.repeat, "repeat", 0, "runs per cell, reported as median and min–max (default 3 in the matrix, 1 with --backend)")
	fl.BoolVar(&m.quick, "quick", false, "matrix: short runs (200 ms each), the whole matrix under 30 s")
	fl.StringVar(&m.paths, "paths", "", "matrix: only these rows or backends (comma-separated, e.g. shm,unix,memcpy)")
	return cmd
}

// runMatrix runs bench.Run and prints its result.
func runMatrix(cmd *cobra.Command, f *runFlags, m *matrixFlags) error {
	var bad []string
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if !slices.Contains(matrixOK, fl.Name) {
			bad = append(bad, "--"+fl.Name)
		}
	})
	if len(bad) > 0 {
		verb := "applies"
		if len(bad) > 1 {
			verb = "apply"
		}
		return fmt.Errorf("%s %s to one path: add --backend NAME to run it alone (the matrix takes --sizes, --repeat, --quick, --paths, --duration, --interval, --json)", strings.Join(bad, ", "), verb)
	}
	site, err := applyConfig(cmd, f)
	if err != nil {
		return err
	}
	cfg := bench.Config{Quick: m.quick, Repeat: f.repeat, Interval: f.interval, Network: os.Geteuid() == 0,
		Limits: job.Limits{RingBytes: site.TX.RingBytes, PrerenderMaxBytes: site.TX.PrerenderMaxBytes, PrerenderMaxPackets: site.TX.PrerenderMaxPackets}}
	if changed(cmd, "duration") != nil {
		cfg.Duration = f.duration
		if f.duration <= 0 {
			return fmt.Errorf("--duration %v: the matrix needs a length per run (e.g. 1s)", f.duration)
		}
	}
	if f.interval < 0 || (f.interval > 0 && f.interval < report.MinInterval) {
		return fmt.Errorf("--interval %v: give a period of %v or more, such as 1s, or 0 for none", f.interval, report.MinInterval)
	}
	if changed(cmd, "repeat") != nil && (f.repeat < 1 || f.repeat > 100) {
		return fmt.Errorf("--repeat %d: give 1 to 100", f.repeat)
	}
	sizes, err := parseSizes(m.sizes, frame.MinPayload, frame.MaxPayload, func(_ string, err error) error {
		return fmt.Errorf("--sizes %q: %v (e.g. --sizes 64,1MiB)", m.sizes, err)
	})
	if err != nil {
		return err
	}
	cfg.Sizes = append(cfg.Sizes, sizes...)
	if m.paths != "" {
		for _, p := range strings.Split(m.paths, ",") {
			cfg.Only = append(cfg.Only, strings.TrimSpace(p))
		}
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	prov := provenance()
	stderr := cmd.ErrOrStderr()
	if report.IsTerminal(stderr) {
		cfg.Progress = func(e bench.Event) {
			fmt.Fprintf(stderr, "\r\033[K[%d/%d] %s at %s (run %d of %d)", e.Cell, e.Cells, e.Path, units.FormatSizeShort(e.Size), e.Repeat, e.Of)
		}
	}
	markStarted(cmd)
	res, err := bench.Run(cmd.Context(), cfg, cliEnv(cmd))
	if cfg.Progress != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if res == nil {
		return &ExitError{Code: ExitRuntime, Err: err}
	}
	res.Provenance = &prov
	res.Environment = sysinfo.Environment("")
	if werr := writeMatrix(cmd.OutOrStdout(), res, f.json); werr != nil {
		return werr
	}
	if err != nil {
		if res.Interrupted {
			why := err.Error()
			if errors.Is(err, context.Canceled) {
				why = "a stop signal: Ctrl-C or SIGTERM" // not Go's "context canceled"
			}
			return &ExitError{Code: ExitRuntime, Err: fmt.Errorf("bench interrupted (%s): the tables hold the runs that finished", why)}
		}
		return &ExitError{Code: ExitRuntime, Err: err}
	}
	return nil
}

func writeMatrix(w io.Writer, res *bench.Result, asJSON bool) error {
	if asJSON {
		return writeJSON(w, res)
	}
	res.WriteTable(w)
	return nil
}

// provenance is what every report says about where it comes from.
func provenance() report.Provenance {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown (" + err.Error() + ")"
	}
	return report.Provenance{
		Version:     versionLine(),
		CommandLine: append([]string{"wpg"}, os.Args[1:]...),
		Start:       time.Now().Format(time.RFC3339),
		Host:        host,
	}
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// parseSizes reads a --sizes list of sizes from lo to hi bytes, each
// given once (a table or column is a size's: a second spelling of one,
// 64 and 64B, would repeat it). A size that does not parse is bad's
// error, given the item as typed.
func parseSizes(list string, lo, hi int64, bad func(item string, err error) error) ([]int64, error) {
	return parseSizeList(list, lo, hi, bad, func(first, again string, n int64) error {
		return fmt.Errorf("--sizes %q: %s and %s are the same size (%s): give each size once", list, first, again, units.FormatSize(n))
	})
}

// parseSizeList is parseSizes with the refusal of a repeated size as
// repeated's error (first and again as typed, n the size), for a command
// whose messages have a wording of their own (ndr).
func parseSizeList(list string, lo, hi int64, bad func(item string, err error) error, repeated func(first, again string, n int64) error) ([]int64, error) {
	given := map[int64]string{}
	var out []int64
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		n, err := units.ParseSizeIn(s, lo, hi)
		if err != nil {
			return nil, bad(s, err)
		}
		if first, ok := given[n]; ok {
			return nil, repeated(first, s, n)
		}
		given[n] = s
		out = append(out, n)
	}
	return out, nil
}
