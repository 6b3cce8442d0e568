package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/memread"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/sysinfo"
)

func init() { register(newSysinfoCmd) }

// maxStalls bounds --stalls: the probe spins a whole CPU for that long on
// each CPU in turn.
const maxStalls = 10 * time.Minute

func newSysinfoCmd() *cobra.Command {
	var asJSON bool
	var iface string
	var stallDur, stallMin time.Duration
	cmd := &cobra.Command{
		Use:   "sysinfo",
		Short: "describe this machine: CPU, cores, NUMA, governor, kernel, TSC, NIC, pipe and memlock limits",
		Long: `sysinfo prints the environment record that wpg reports embed and docs/perf.md asks for: CPU model,
online and allowed CPUs, physical cores, NUMA nodes, cpufreq governor, kernel, the TSC flags
(constant_tsc, nonstop_tsc), /proc/sys/fs/pipe-max-size and this process's memlock limit (ulimit -l).
With -i IFACE it adds the interface's driver, link speed, MTU, queue counts, NUMA node, and XPS and RPS maps.
Then the kernel features the backends probe (each on a throw-away socket or file, once), with the first
Linux release that has them; without the privilege a probe needs, it says "inconclusive" and why.
It also lists the backends this build has and the in-place readers (membench --reader) this CPU can
run: help text lists every one wpg knows, whatever the machine. The environment part reads /proc and
/sys only and needs no privileges.

--stalls D also spins for D on each allowed CPU in turn and reports what was taken away from the
spinning thread: gaps of at least --stall-min between two clock reads (interrupts, other tasks, a
hypervisor running something else), how often, how long, the share of time lost, and their period when
they recur regularly. No pacing can be more precise than this on that CPU: a frame due during a stall
leaves after it (docs/rate.md).`,
		Example: "  wpg sysinfo\n  wpg sysinfo -i lo --json\n  wpg sysinfo --stalls 2s",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if stallDur < 0 {
				return fmt.Errorf("--stalls %s: must not be negative; give how long to spin on each CPU, e.g. --stalls 2s (0: no stall probe)", stallDur)
			}
			if stallDur > maxStalls {
				return fmt.Errorf("--stalls %s: give how long to spin on each CPU, up to %v, e.g. --stalls 2s (0: no stall probe)", stallDur, maxStalls)
			}
			if stallMin <= 0 {
				return fmt.Errorf("--stall-min %s: give the shortest gap counted as a stall, more than 0, e.g. --stall-min 2us", stallMin)
			}
			if stallDur > 0 && stallMin >= stallDur {
				return fmt.Errorf("--stall-min %s: a stall counted must be shorter than the --stalls %s spin on each CPU: give a --stall-min of microseconds (default 2us)", stallMin, stallDur)
			}
			if changed(cmd, "stall-min") != nil && stallDur == 0 {
				return fmt.Errorf("--stall-min applies to the stall probe: add --stalls D (e.g. --stalls 2s), or drop --stall-min")
			}
			markStarted(cmd)
			e, err := sysinfo.HostFS().Environment(iface)
			if err != nil {
				return err
			}
			feats := sysinfo.Features()
			var stalls []sysinfo.CPUStalls
			var interrupted error
			if stallDur > 0 {
				cpus, err := sys.AllowedCPUs()
				if err != nil {
					return err
				}
				// Ctrl-C ends the probe at once; what it saw is printed.
				if stalls, err = sysinfo.ProbeStallsContext(cmd.Context(), cpus, stallDur, stallMin); err != nil {
					if cmd.Context().Err() == nil {
						return err
					}
					interrupted = fmt.Errorf("stall probe interrupted: the figures cover %d of %d CPUs, the last one cut short", len(stalls), len(cpus))
				}
			}
			if interrupted != nil {
				defer func() { err = errors.Join(err, interrupted) }()
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, struct {
					sysinfo.Env
					Build    buildInfo           `json:"build"`
					Features []sysinfo.Feature   `json:"features"`
					Stalls   []sysinfo.CPUStalls `json:"stalls,omitempty"`
				}{e, thisBuild(), feats, stalls})
			}
			e.WriteTable(out)
			thisBuild().writeTable(out)
			if len(stalls) > 0 {
				fmt.Fprintln(out)
				sysinfo.WriteStalls(out, stalls)
			}
			if len(feats) > 0 {
				fmt.Fprintln(out)
				tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "kernel feature\tsince\tstatus")
				for _, f := range feats {
					st := string(f.Status)
					if f.Detail != "" {
						st += " (" + f.Detail + ")"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Name, f.MinKernel, st)
				}
				return tw.Flush()
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (the report's environment object)")
	cmd.Flags().StringVarP(&iface, "interface", "i", "", "also describe this network interface")
	cmd.Flags().DurationVar(&stallDur, "stalls", 0, "also spin this long on each allowed CPU and report the stalls a spinning thread sees (e.g. 2s; at most 10m; Ctrl-C ends it with what it saw)")
	cmd.Flags().DurationVar(&stallMin, "stall-min", 2*time.Microsecond, "shortest gap between two clock reads counted as a stall")
	return cmd
}

// buildInfo is what this binary and this CPU can run: the help text lists
// every backend and reader wpg knows, the same on every machine; sysinfo
// says which of them are here.
type buildInfo struct {
	Backends        []string `json:"backends"`
	MissingBackends []string `json:"backends_not_in_build,omitempty"`
	Readers         []string `json:"readers"`
	MissingReaders  []string `json:"readers_not_on_cpu,omitempty"`
}

func thisBuild() buildInfo {
	var b buildInfo
	b.Backends = backend.Names()
	for _, k := range backend.Known() {
		if !slices.Contains(b.Backends, k) {
			b.MissingBackends = append(b.MissingBackends, k)
		}
	}
	for _, im := range memread.All() {
		if im.Sum != nil {
			b.Readers = append(b.Readers, im.Name)
		} else {
			b.MissingReaders = append(b.MissingReaders, im.Name+" (needs "+im.Needs+")")
		}
	}
	return b
}

func (b buildInfo) writeTable(w io.Writer) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	line := strings.Join(b.Backends, ", ") + " (--backend)"
	if len(b.MissingBackends) > 0 {
		line += "; not in this build: " + strings.Join(b.MissingBackends, ", ")
	}
	fmt.Fprintf(tw, "backends\t%s\n", line)
	line = strings.Join(b.Readers, ", ") + " (membench --reader)"
	if len(b.MissingReaders) > 0 {
		line += "; not on this CPU: " + strings.Join(b.MissingReaders, ", ")
	}
	fmt.Fprintf(tw, "in-place readers\t%s\n", line)
	_ = tw.Flush()
}
