package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wpg-dev/wpg/internal/suggest"
)

// otherTools are flags of the tools wpg's users come from (tcpreplay,
// trafgen, pktgen) that wpg spells differently: the flag as typed there,
// wpg's flag that does it (offered only where the command has it), and
// how to write it.
var otherTools = []struct{ typed, flag, say string }{
	{"topspeed", "rate", "tcpreplay's --topspeed is --rate max here"},
	{"pps", "rate", "a frame rate is --rate with its unit here, e.g. --rate 1000pps"},
	{"mbps", "rate", "a bit rate is --rate with its unit here, e.g. --rate 100Mbps"},
	{"multiplier", "pcap-speed", "tcpreplay's --multiplier is --pcap-speed here (2 = twice as fast)"},
	{"loop", "count", "a capture replays once; to loop it, give --count with the frames in all (records × passes)"},
	{"intf1", "interface", "the interface is -i/--interface here"},
	{"dev", "interface", "the interface is -i/--interface here"},
	{"iface", "interface", "the interface is -i/--interface here"},
	{"cpus", "workers", "the number of sending threads is --workers here, and --pin-cores picks their CPUs (e.g. --workers 2 --pin-cores 2,3)"},
	{"num", "count", "the number of frames is --count here"},
}

// flagHint says what an unknown long flag name was likely meant to be on
// cmd: another tool's flag in wpg's words, or the flag within two typos
// of it ("did you mean --interface?"); "" when nothing is near.
func flagHint(cmd *cobra.Command, name string) string {
	if name == "" {
		return ""
	}
	lower := strings.ToLower(name)
	for _, o := range otherTools {
		if lower == o.typed && cmd.Flags().Lookup(o.flag) != nil {
			return o.say
		}
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Deprecated == "" {
			names = append(names, f.Name)
		}
	})
	if s := suggest.Closest(name, names); s != "" {
		return "did you mean --" + s + "?"
	}
	// A flag of another command: wpg preview --pcap, wpg recv --rate.
	var has []string
	for _, c := range cmd.Root().Commands() {
		if c != cmd && !c.Hidden && c.Flags().Lookup(name) != nil {
			has = append(has, c.CommandPath())
		}
	}
	if len(has) > 0 && len(has) <= 3 {
		return "--" + name + " is a flag of " + strings.Join(has, " and ") + ", not of " + cmd.CommandPath()
	}
	return ""
}
