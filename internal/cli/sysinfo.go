package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/sysinfo"
)

func init() { register(newSysinfoCmd) }

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
The environment part reads /proc and /sys only and needs no privileges.

--stalls D also spins for D on each allowed CPU in turn and reports what was taken away from the
spinning thread: gaps of at least --stall-min between two clock reads (interrupts, other tasks, a
hypervisor running something else), how often, how long, the share of time lost, and their period when
they recur regularly. No pacing can be more precise than this on that CPU: a frame due during a stall
leaves after it (docs/rate.md).`,
		Example: "  wpg sysinfo\n  wpg sysinfo -i lo --json\n  wpg sysinfo --stalls 2s",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := sysinfo.Host.Environment(iface)
			if err != nil {
				return err
			}
			feats := sysinfo.Features()
			var stalls []sysinfo.CPUStalls
			if stallDur > 0 {
				cpus, err := sys.AllowedCPUs()
				if err != nil {
					return err
				}
				if stalls, err = sysinfo.ProbeStalls(cpus, stallDur, stallMin); err != nil {
					return err
				}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					sysinfo.Env
					Features []sysinfo.Feature   `json:"features"`
					Stalls   []sysinfo.CPUStalls `json:"stalls,omitempty"`
				}{e, feats, stalls})
			}
			e.WriteTable(out)
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
	cmd.Flags().DurationVar(&stallDur, "stalls", 0, "also spin this long on each allowed CPU and report the stalls a spinning thread sees (e.g. 2s)")
	cmd.Flags().DurationVar(&stallMin, "stall-min", 2*time.Microsecond, "shortest gap between two clock reads counted as a stall")
	return cmd
}
