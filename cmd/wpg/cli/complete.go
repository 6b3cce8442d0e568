package cli

import (
	"net"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wpg-dev/wpg/backend"
)

// flagChoices are the values shell completion offers for a flag of that
// name, on every command that has it: the words of its enumeration (each
// one its usage names: TestCompletionValuesAreAccepted), or what this
// build and this host have.
var flagChoices = map[string]func(cmd *cobra.Command) []string{
	"backend": backendChoices,
	"rx-backend": func(*cobra.Command) []string {
		return backendNames(func(r backend.Registration) bool { return r.Receives })
	},
	"interface":    interfaceChoices,
	"rx-interface": interfaceChoices,
	"plan":         words("auto", "prerender", "stream"),
	"wait":         words("hybrid", "spin", "sleep"),
	"clock":        words("auto", "tsc", "monotonic"),
	"rate-layer":   words("l2", "l1"),
	"wake-boost":   words("auto", "on", "off"),
	"xdp-mode":     words("auto", "native", "generic"),
	"tx-copy":      words("auto", "linear", "frags"),
	"fill":         words("pattern", "random", "file"),
	"verify":       words("on", "sample", "off"),
	"format":       words("pcap", "pcapng"),
	"profile":      profileChoices,
	"rate": words( // send, bench: examples of pace.ParseRate's spellings (docs/rate.md)
		"1Mpps\tframes per second (TRex's 1mpps too)",
		"100kpps\tframes per second",
		"10Gbps\tbits per second, counted at --rate-layer (TRex's 10gbps too)",
		"1Gbit/s\tbits per second (tc's 1gbit, iperf3's 1G too)",
		"50%\ta share of -i's link speed, at layer 1",
		"ifg=10us\ta fixed interval between frames",
		"max\tflat out, no pacing",
	),
	"max-rate": ndrRates, // ndr: a frame or bit rate
	"min-rate": ndrRates,
	"router-shape": words( // ndr --router: tbf's rate, a bit rate only
		"20Mbps\tbits per second, the router's egress shaped with tbf (tc's 20mbit too)",
		"100Mbps\tbits per second",
		"1Gbit/s\tbits per second (tc's 1gbit too)",
	),
}

// ndrRates are examples of the rates wpg ndr's --max-rate and --min-rate
// take: a frame or bit rate (no share of the link, no interval).
var ndrRates = words(
	"10Gbps\tbits per second, counted at --rate-layer",
	"1Gbit/s\tbits per second",
	"1Mpps\tframes per second",
	"100kpps\tframes per second",
)

func words(w ...string) func(*cobra.Command) []string {
	return func(*cobra.Command) []string { return w }
}

// backendChoices are the backends of this build that the command runs:
// those with a receiving side for recv, every one for the senders.
func backendChoices(cmd *cobra.Command) []string {
	if cmd.Name() == "recv" {
		return backendNames(func(r backend.Registration) bool { return r.Receives })
	}
	return backendNames(func(backend.Registration) bool { return true })
}

func backendNames(keep func(backend.Registration) bool) []string {
	var out []string
	for _, r := range backend.All() {
		if keep(r) {
			out = append(out, r.Name+"\t"+r.Summary)
		}
	}
	return out
}

// interfaceChoices are the network interfaces of the namespace wpg runs in.
func interfaceChoices(*cobra.Command) []string {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	var out []string
	for _, i := range ifs {
		out = append(out, i.Name)
	}
	return out
}

// profileChoices are the [profile.NAME] tables of the configuration file
// the command would read.
func profileChoices(cmd *cobra.Command) []string {
	cfg, err := loadConfig(cmd)
	if err != nil {
		return nil
	}
	return cfg.Profiles
}

// templateArg completes a command's TEMPLATE argument with YAML files
// (the example templates among them: examples/*.wpg.yaml).
func templateArg(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
}

// pathFlags are the flags whose value is a path, on every command that
// has them: the shell completes their values with file names (true: with
// directories). Every other flag that takes a value completes its
// flagChoices or nothing (TestCompletionOfPathsOnly).
var pathFlags = map[string]bool{
	"config": false, "output": false, "hdr-out": false, "payload-file": false, "fifo": false,
	"connect": false, "device": false, "netns": false, "rx-netns": false, "pcap": false,
	"db": false, "token-file": false, "job-files": true, "dev-root": true, "sys-root": true,
}

// isPathFlag says whether the flag name of cmd takes a path: pathFlags,
// and recv's --listen (its rendezvous socket; serve's is host:port).
func isPathFlag(cmd *cobra.Command, name string) (path, dir bool) {
	if name == "listen" {
		return cmd.Name() == "recv", false
	}
	dir, path = pathFlags[name]
	return path, dir
}

// addCompletions registers the value completions of flagChoices on every
// command of the tree under c that has such a flag, directories for the
// pathFlags that name one, no completion at all for the other flags that
// take a value and are no path (the shell would offer file names), and
// templateArg for the commands that take a template.
func addCompletions(c *cobra.Command) {
	for name, choices := range flagChoices {
		if c.LocalNonPersistentFlags().Lookup(name) == nil && c.PersistentFlags().Lookup(name) == nil {
			continue // a parent's persistent flag is registered once, there
		}
		choices := choices
		_ = c.RegisterFlagCompletionFunc(name, func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
			return choices(cmd), cobra.ShellCompDirectiveNoFileComp
		})
	}
	own := func(fl *pflag.Flag) {
		if typ := fl.Value.Type(); typ == "bool" || typ == "count" {
			return // no value
		}
		if _, ok := c.GetFlagCompletionFunc(fl.Name); ok {
			return
		}
		switch path, dir := isPathFlag(c, fl.Name); {
		case dir:
			_ = c.MarkFlagDirname(fl.Name)
		case !path:
			_ = c.RegisterFlagCompletionFunc(fl.Name, cobra.NoFileCompletions)
		}
	}
	c.LocalNonPersistentFlags().VisitAll(own)
	c.PersistentFlags().VisitAll(own)
	if c.ValidArgsFunction == nil && slices.Contains([]string{"send", "bench", "preview", "ndr"}, c.Name()) {
		c.ValidArgsFunction = templateArg
	}
	for _, sub := range c.Commands() {
		addCompletions(sub)
	}
}
