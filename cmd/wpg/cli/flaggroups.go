package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The commands with many flags (send: some 65) show them in groups, in
// --help and in docs/cli.md alike: a flag's group is its annotation
// flagGroupKey, set from the tables below once the command tree is built
// (groupFlags); the usage template lists each group under its title.

// flagGroupKey is the pflag annotation that names a flag's group.
const flagGroupKey = "wpg_flag_group"

// flagGroup is one group of a command's flags, in the order shown.
type flagGroup struct {
	title string
	flags []string
}

// runGroups are the groups of send's and bench's flags (the flags a
// command lacks are skipped: bench has no --pcap, send no --sizes).
var runGroups = []flagGroup{
	{"Rate", []string{"rate", "rate-layer", "burst", "wait", "wake-boost", "rt-priority", "fail-under", "clock"}},
	{"Frames and how many", []string{"count", "duration", "pcap", "pcap-speed", "size", "raw", "fill", "payload-file", "seed", "plan", "prerender-max-bytes", "prerender-max-packets"}},
	{"Path and workers", []string{"backend", "interface", "batch", "workers", "pin-core", "pin-cores", "auto-pin"}},
	{"Network paths (afpacket, afxdp, dpdk, pcapfile)", []string{"ring-depth", "ring-bytes", "no-tx-ring", "qdisc-bypass", "tx-copy", "queue", "xdp-mode", "busy-poll", "dpdk-args", "output", "format"}},
	{"Local and device paths (pipe, shm, cma, xpmem, unix, udmabuf)", []string{"verify", "fifo", "vmsplice", "connect", "recv-mode", "busy-wait", "slots", "pipe-size", "device", "sync", "sync-mode"}},
	{"Device testing: port pairs (docs/device.md)", []string{"rx-interface", "rx-backend", "netns", "rx-netns", "src-ip", "gateway", "rx-src-ip", "rx-gateway", "bidir"}},
	{"Segments and metrics (docs/distributed.md)", []string{"segment", "metrics-listen", "metrics-linger", "job"}},
	{"The matrix (bench without --backend)", []string{"sizes", "paths", "quick", "repeat"}},
	{"Output", []string{"json", "json-stream", "interval", "hdr-out"}},
}

// commandGroups are the grouped commands' tables.
var commandGroups = map[string][]flagGroup{
	"send":  runGroups,
	"bench": runGroups,
	"recv": {
		{"Path", []string{"backend", "interface", "listen", "batch"}},
		{"When to stop", []string{"expect", "duration", "idle-timeout"}},
		{"Network paths (afpacket, afxdp, dpdk)", []string{"ring-bytes", "no-rx-ring", "queue", "xdp-mode", "busy-poll", "dpdk-args"}},
		{"Local paths (pipe, shm, cma, unix)", []string{"fifo", "recv-mode", "busy-wait", "slots", "pipe-size", "verify", "size"}},
		{"Output", []string{"json", "json-stream", "interval", "hdr-out", "rate-layer", "metrics-listen", "metrics-linger", "job"}},
	},
	"ndr": {
		{"Search", []string{"sizes", "trial", "warmup", "resolution", "loss", "max-rate", "min-rate", "rate-layer", "max-trials"}},
		{"Path", []string{"interface", "rx-interface", "backend", "qdisc-bypass", "router", "router-shape"}},
		{"Device under test (docs/device.md)", []string{"netns", "rx-netns", "src-ip", "gateway", "rx-src-ip", "rx-gateway", "bidir"}},
		{"RFC 2544's latency and back-to-back tests", []string{"latency", "back-to-back", "b2b-max", "b2b-repeat"}},
		{"Output", []string{"json"}},
	},
}

// groupFlags annotates the flags of the commands of root that have a
// table, with their group.
func groupFlags(root *cobra.Command) {
	for _, c := range root.Commands() {
		for _, g := range commandGroups[c.Name()] {
			for _, name := range g.flags {
				if f := c.Flags().Lookup(name); f != nil {
					if f.Annotations == nil {
						f.Annotations = map[string][]string{}
					}
					f.Annotations[flagGroupKey] = []string{g.title}
				}
			}
		}
	}
}

// flagSection is one titled block of a command's flag usages.
type flagSection struct {
	Title, Usages string
}

// flagSections are c's own flags as the help and docs/cli.md show them:
// one "Flags" block for a command without groups; else a block per group
// in its table's order, and "Other flags" (--help) last.
func flagSections(c *cobra.Command) []flagSection {
	local := c.LocalFlags()
	sets := map[string]*pflag.FlagSet{}
	var other *pflag.FlagSet
	local.VisitAll(func(f *pflag.Flag) {
		g := f.Annotations[flagGroupKey]
		if len(g) == 0 {
			if other == nil {
				other = pflag.NewFlagSet("other", pflag.ContinueOnError)
			}
			other.AddFlag(f)
			return
		}
		if sets[g[0]] == nil {
			sets[g[0]] = pflag.NewFlagSet(g[0], pflag.ContinueOnError)
		}
		sets[g[0]].AddFlag(f)
	})
	if len(sets) == 0 {
		if u := local.FlagUsages(); u != "" {
			return []flagSection{{"Flags", u}}
		}
		return nil
	}
	var out []flagSection
	for _, g := range commandGroups[c.Name()] {
		if fs := sets[g.title]; fs != nil {
			if u := fs.FlagUsages(); u != "" {
				out = append(out, flagSection{g.title, u})
			}
		}
	}
	if other != nil {
		if u := other.FlagUsages(); u != "" {
			out = append(out, flagSection{"Other flags", u})
		}
	}
	return out
}

// usageTemplate is cobra's default usage template with the command's own
// flags in their groups (flagSections).
var usageTemplate = strings.Replace(defaultUsage, `{{if .HasAvailableLocalFlags}}

Flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}`, `{{if .HasAvailableLocalFlags}}{{range flagSections .}}

{{.Title}}:
{{.Usages | trimTrailingWhitespaces}}{{end}}{{end}}`, 1)

// defaultUsage is cobra v1.10's default usage template.
const defaultUsage = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if gt (len .Aliases) 0}}

Aliases:
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}{{$cmds := .Commands}}{{if eq (len .Groups) 0}}

Available Commands:{{range $cmds}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{else}}{{range $group := .Groups}}

{{.Title}}{{range $cmds}}{{if (and (eq .GroupID $group.ID) (or .IsAvailableCommand (eq .Name "help")))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if not .AllChildCommandsHaveGroup}}

Additional Commands:{{range $cmds}}{{if (and (eq .GroupID "") (or .IsAvailableCommand (eq .Name "help")))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

Flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableInheritedFlags}}

Global Flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasHelpSubCommands}}

Additional help topics:{{range .Commands}}{{if .IsAdditionalHelpTopicCommand}}
  {{rpad .CommandPath .CommandPathPadding}} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
`

func init() { cobra.AddTemplateFunc("flagSections", flagSections) }
