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
  wpg send -i eth1 --src-ip 198.18.0.1/24 --gateway 198.18.0.254 --rx-interface eth2 --rx-src-ip 198.19.0.1/24 --rate 50kpps --count 100000
  wpg send -i eth1 --src-ip 198.18.0.1/24 --gateway 198.18.0.254 --rx-interface eth2 --rx-src-ip 198.19.0.1/24 --rx-gateway 198.19.0.254 --bidir --rate 50kpps --duration 10s
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
	addPairFlags(cmd, f)
	cmd.Flags().StringVar(&f.segment, "segment", "", "send segment `I/N` of the job, N senders together sending what one would (k6's execution segments): a disjoint share of every stream, of --rate and of --count; auto in a Kubernetes Indexed Job's pod (JOB_COMPLETION_INDEX of WPG_SEGMENTS; docs/distributed.md)")
	addMetricsFlags(cmd.Flags(), &f.metrics, "with --metrics-listen: the job label of the run's series is `NAME` instead of the job identity (wpg-…, which the report's job keeps for wpg report merge), e.g. a test's name shared by every segment and by wpg recv --job NAME")
	addReportFlags(cmd, f)
	return cmd
}

// addPairFlags adds send's port-pair flags (docs/device.md).
func addPairFlags(cmd *cobra.Command, f *runFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.rxIface, "rx-interface", "", "receive the run's frames on this `PORT` too, in this process on the same clock (the far side of a device under test): the report counts lost, duplicated, reordered, corrupted, latency and jitter per stream")
	fl.StringVar(&f.rxBackend, "rx-backend", "", "the receiving port's backend: afpacket (default) or another that receives on a network interface (afxdp, …)")
	fl.StringVar(&f.netns, "netns", "", "the network namespace of -i: a name of ip netns, or a file such as /proc/PID/ns/net")
	fl.StringVar(&f.rxNetns, "rx-netns", "", "the network namespace of --rx-interface")
	fl.StringVar(&f.srcIP, "src-ip", "", "the sending port's `ADDRESS/PREFIX` (198.18.0.1/24): frames go from it, and wpg answers ARP/ND for it (config port.src_ip)")
	fl.StringVar(&f.gateway, "gateway", "", "the sending port's next hop `IP`: its MAC (ARP, Neighbor Discovery) is the frames' destination (config port.gateway)")
	fl.StringVar(&f.rxSrcIP, "rx-src-ip", "", "the receiving port's `ADDRESS/PREFIX`: wpg answers ARP/ND for it (config port.rx_src_ip)")
	fl.StringVar(&f.rxGateway, "rx-gateway", "", "the receiving port's next hop `IP` (--bidir sends from that port through it; config port.rx_gateway)")
	fl.BoolVar(&f.bidir, "bidir", false, "send from both ports: the streams A→B and their mirror B→A (addresses and ports swapped, or the template's reverse:), each counted and judged apart")
}
