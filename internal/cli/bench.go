package cli

import (
	"github.com/spf13/cobra"
)

func init() { register(newBenchCmd) }

func newBenchCmd() *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "bench [TEMPLATE.wpg.yaml]",
		Short: "measure the highest rate a backend reaches (default: null backend, 64-byte frames, 10 s)",
		Long: `bench sends flat out (unless --rate is given) for --duration (10 s) with --batch 256 and reports the
rate reached. With no arguments it runs the embedded 64-byte UDP template on the null backend, which needs
no privileges and measures the generator itself. Local paths (pipe, shm, cma, unix) start their own receiver.`,
		Example: `  wpg bench
  wpg bench --backend afpacket -i veth0 --qdisc-bypass
  wpg bench --backend shm --size 1MiB --duration 5s`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tpl := ""
			if len(args) == 1 {
				tpl = args[0]
			}
			return runJob(cmd, f, "bench", tpl)
		},
	}
	addRunFlags(cmd, f, true)
	return cmd
}
