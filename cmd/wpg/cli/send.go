package cli

import (
	"github.com/spf13/cobra"
)

func init() { register(newSendCmd) }

func newSendCmd() *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "send [TEMPLATE.wpg.yaml]",
		Short: "send a template's streams (or payload frames) through a backend, flat out or at --rate",
		Long: `send renders the template's streams (the embedded 64-byte UDP default when none is given) or, on local
and device paths, payload frames of --size bytes, and pushes them through --backend at --rate (flat out when
no rate is given) until --count frames, --duration, the template's counts, or Ctrl-C; then prints the report.`,
		Example: `  wpg send examples/mixed.wpg.yaml --backend pcapfile -o out.pcap --count 100000
  wpg send examples/udp64.wpg.yaml -i veth0 --rate 1Mpps --duration 10s
  wpg send --pcap capture.pcap -i veth0                # replay with the capture's own timing
  wpg send --backend pipe --raw --size 460800 --rate 15fps --count 30 | ffmpeg -f rawvideo ...`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tpl := ""
			if len(args) == 1 {
				tpl = args[0]
			}
			return runJob(cmd, f, "send", tpl)
		},
	}
	addRunFlags(cmd, f, false)
	cmd.Flags().StringVar(&f.pcap, "pcap", "", "replay this pcap or pcapng `FILE` as captured, with its own timing (or at --rate), instead of a template")
	cmd.Flags().Float64Var(&f.pcapSpeed, "pcap-speed", 0, "--pcap with its own timing: divide the capture's gaps by this `FACTOR`, 0.001 to 1e6 (2 = twice as fast; default 1)")
	addReportFlags(cmd, f)
	return cmd
}
