package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wpg-dev/wpg/internal/printable"
	"github.com/wpg-dev/wpg/template"
)

func init() { register(newPreviewCmd) }

// previewDefaultFrames is how many frames `wpg preview` shows without -n.
const previewDefaultFrames = 4

func newPreviewCmd() *cobra.Command {
	var n int
	var asJSON bool
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
			frames, err := template.Preview(spec, n)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"template": spec.File, "frames": frames})
			}
			fmt.Fprintf(out, "template %s: %d stream(s)\n", printable.Escape(spec.File), len(spec.Streams))
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
	return cmd
}
