package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/wpg-dev/wpg/cmd/wpg/cli/config"
)

func init() { register(newConfigCmd) }

func newConfigCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "config",
		Short: "print every effective configuration value and where it came from",
		Long: `config reads wpg.toml (--config, $WPG_CONFIG, ./wpg.toml, $XDG_CONFIG_HOME/wpg/wpg.toml) over the
built-in defaults, and with --profile NAME its [profile.NAME] table over the file's keys, and prints each
key's effective value and its source (default, FILE:LINE, or profile NAME, FILE:LINE). Flags of send and
bench override both for one run (--ring-bytes, --prerender-max-bytes, --prerender-max-packets; send's
-i, --backend, --rate, --workers, --pin-cores; recv's -i).`,
		Example: "  wpg config\n  wpg config --profile lab --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			markStarted(cmd) // a bad file is a usage error; writing the table is not
			out := cmd.OutOrStdout()
			if asJSON {
				type entry struct {
					Key    string `json:"key"`
					Value  any    `json:"value"`
					Source string `json:"source"`
				}
				var list []entry
				for _, k := range config.Keys {
					var v any
					if k.Text {
						v, _ = cfg.GetText(k.Name)
					} else {
						v, _ = cfg.Get(k.Name)
					}
					list = append(list, entry{k.Name, v, cfg.Sources[k.Name]})
				}
				return writeJSON(out, map[string]any{"file": cfg.File, "profile": cfg.Profile, "profiles": cfg.Profiles, "keys": list})
			}
			file := cfg.File
			if file == "" {
				file = "(none found; defaults only)"
			}
			fmt.Fprintf(out, "configuration file: %s\n", file)
			if len(cfg.Profiles) > 0 {
				chosen := cfg.Profile
				if chosen == "" {
					chosen = "none (--profile NAME)"
				}
				fmt.Fprintf(out, "profile: %s (the file's profiles: %s)\n", chosen, strings.Join(cfg.Profiles, ", "))
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "KEY\tVALUE\tSOURCE\tFLAG")
			for _, k := range config.Keys {
				val := cfg.Value(k)
				if val == "" {
					val = `""`
				}
				flag := k.Flag
				if flag == "" {
					flag = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", k.Name, val, cfg.Sources[k.Name], flag)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
