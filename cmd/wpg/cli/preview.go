package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wpg-dev/wpg/cmd/wpg/cli/config"
	"github.com/wpg-dev/wpg/internal/printable"
	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/nexthop"
	"github.com/wpg-dev/wpg/template"
)

func init() { register(newPreviewCmd) }

// previewDefaultFrames is how many frames `wpg preview` shows without -n.
const previewDefaultFrames = 4

func newPreviewCmd() *cobra.Command {
	var n int
	var asJSON bool
	var port previewPort
	cmd := &cobra.Command{
		Use:   "preview [TEMPLATE]",
		Short: "show the first frames of a template, decoded layer by layer and in hex",
		Long: `preview renders the first N frames of a packet template (*.wpg.yaml; the embedded default
template when none is given) exactly as worker 0 of a one-worker send produces them, and prints each
decoded layer by layer (checksums verified) and as a hex dump. N is capped by server.preview_max in
wpg.toml (default 256). See docs/templates.md for the template language.`,
		Example: "  wpg preview examples/mixed.wpg.yaml -n 12\n  wpg preview --json examples/udp64.wpg.yaml",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			limit := cfg.Server.PreviewMax
			if n < 1 {
				return fmt.Errorf("preview: -n %d: give a number of frames of at least 1", n)
			}
			if int64(n) > limit {
				return fmt.Errorf("preview: -n %d exceeds server.preview_max = %d (from %s); use -n %d or less, or raise server.preview_max in wpg.toml", n, limit, cfg.Sources["server.preview_max"], limit)
			}
			spec := template.Default()
			if len(args) == 1 {
				if spec, err = template.Load(args[0]); err != nil {
					return err
				}
			}
			resolved, err := port.fill(cmd, cfg, spec)
			if err != nil {
				return err
			}
			frames, err := template.Preview(spec, n)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				doc := map[string]any{"template": spec.File, "frames": frames}
				if resolved != nil {
					doc["port"] = resolved
				}
				return writeJSON(out, doc)
			}
			fmt.Fprintf(out, "template %s: %d stream(s)\n", printable.Escape(spec.File), len(spec.Streams))
			if r := resolved; r != nil {
				line := fmt.Sprintf("port %s: %s, %s", r.Interface, r.MAC, r.Address)
				if r.Gateway != "" {
					line += fmt.Sprintf(" via %s at %s (resolved by %s)", r.Gateway, r.GatewayMAC, r.Proto)
				}
				fmt.Fprintln(out, printable.Escape(line))
			}
			for i := range frames {
				fmt.Fprintln(out)
				if err := frames[i].WriteText(out); err != nil {
					return err
				}
			}
			if len(frames) < n {
				fmt.Fprintf(out, "\n(the template ends after %d frames: every stream reached its count)\n", len(frames))
			}
			return nil
		},
	}
	cmd.Flags().IntVarP(&n, "frames", "n", previewDefaultFrames, "number of frames to show (at most server.preview_max)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the frames as JSON (layers and bytes)")
	cmd.Flags().StringVarP(&port.iface, "interface", "i", "", "with --src-ip (or the template's ports: tx), resolve the gateway on this `PORT` and show the frames as a run sends them (its MAC, the gateway's)")
	cmd.Flags().StringVar(&port.netns, "netns", "", "the network namespace of -i (a name of ip netns, or a file)")
	cmd.Flags().StringVar(&port.srcIP, "src-ip", "", "the port's `ADDRESS/PREFIX` (needs -i)")
	cmd.Flags().StringVar(&port.gateway, "gateway", "", "the port's next hop `IP`, resolved by ARP or Neighbor Discovery (needs -i)")
	return cmd
}

// previewPort is preview's port: a run's next-hop resolution, so that the
// frames show the MACs a run would send.
type previewPort struct {
	iface, netns, srcIP, gateway string
}

// resolvedPort is what preview resolved, for its output.
type resolvedPort struct {
	Interface  string `json:"interface"`
	MAC        string `json:"mac"`
	Address    string `json:"address"`
	Gateway    string `json:"gateway,omitempty"`
	GatewayMAC string `json:"gateway_mac,omitempty"`
	Proto      string `json:"resolved_by,omitempty"`
}

// fill resolves the port's gateway (the flags', else the template's
// ports: tx, else wpg.toml's [port] with -i, as a run takes them) and
// fills spec's frames as a run would; nil without a port.
func (pp previewPort) fill(cmd *cobra.Command, cfg *config.Config, spec *template.Spec) (*resolvedPort, error) {
	addr, gw := pp.srcIP, pp.gateway
	addrName, gwName := "--src-ip", "--gateway"
	if addr == "" && pp.gateway != "" {
		return nil, usageError(fmt.Errorf("--gateway %s: needs the port's own address: add --src-ip ADDRESS/PREFIX (e.g. 198.18.0.1/24) and -i PORT", pp.gateway))
	}
	if addr == "" && spec.Ports != nil && spec.Ports.TX != nil {
		addr = spec.Ports.TX.Addr.String()
		if spec.Ports.TX.Gateway.IsValid() {
			gw = spec.Ports.TX.Gateway.String()
		}
	}
	if addr == "" && pp.iface != "" && cfg.Port.SrcIP != "" {
		addr, gw = cfg.Port.SrcIP, cfg.Port.Gateway
		addrName = "port.src_ip (" + cfg.Sources["port.src_ip"] + ")"
		gwName = "port.gateway (" + cfg.Sources["port.gateway"] + ")"
	}
	switch {
	case addr == "" && pp.iface == "":
		return nil, nil
	case addr == "":
		return nil, usageError(fmt.Errorf("-i %s: preview resolves a port's gateway, and no address is given: add --src-ip ADDRESS/PREFIX and --gateway IP (or ports: tx: in the template, or [port] src_ip in wpg.toml), or drop -i", pp.iface))
	case pp.iface == "":
		if pp.srcIP == "" {
			return nil, nil // the template's ports: without a port to resolve on
		}
		return nil, usageError(fmt.Errorf("--src-ip %s: preview resolves the gateway on a port: add -i PORT (and --netns NS where it is in another namespace)", pp.srcIP))
	}
	if _, err := nexthop.ParsePort(addr, gw); err != nil {
		if pe, ok := err.(*nexthop.PortError); ok {
			flag := addrName
			if pe.Field == nexthop.FieldGateway {
				flag = gwName
			}
			return nil, usageError(fmt.Errorf("%s %s: %s; %s", flag, pe.Value, pe.Why, pe.Remedy))
		}
		return nil, usageError(err)
	}
	mac, gwMAC, err := job.ResolvePort(cmd.Context(), pp.iface, pp.netns, addr, gw, spec)
	if err != nil {
		return nil, err
	}
	if err := job.FillPort(spec, mac, gwMAC, addr); err != nil {
		return nil, err
	}
	r := &resolvedPort{Interface: pp.iface, MAC: mac.String(), Address: addr, Gateway: gw}
	if gwMAC != nil {
		r.GatewayMAC = gwMAC.String()
		r.Proto = "ARP"
		if !strings.Contains(addr, ".") {
			r.Proto = "Neighbor Discovery"
		}
	}
	return r, nil
}
