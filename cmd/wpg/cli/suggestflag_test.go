package cli

import (
	"strings"
	"testing"
)

// An unknown flag said only "unknown flag: --intreface": a typo now gets
// the flag it was near, and a flag of tcpreplay, trafgen or pktgen what
// wpg calls it, where the command has it; anything else stays as it was.
func TestUnknownFlagHints(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // "" = no hint
	}{
		{[]string{"send", "--backend", "null", "--intreface", "lo"}, "unknown flag: --intreface: did you mean --interface? (see wpg send --help)"},
		{[]string{"send", "--backend", "null", "--Rtae", "1kpps"}, "did you mean --rate?"},
		{[]string{"send", "--topspeed"}, "tcpreplay's --topspeed is --rate max here"},
		{[]string{"send", "--pps", "100"}, "--rate 1000pps"},
		{[]string{"send", "--multiplier", "2"}, "is --pcap-speed here"},
		{[]string{"send", "--dev", "lo"}, "-i/--interface"},
		{[]string{"send", "--cpus", "2"}, "--workers"},
		{[]string{"bench", "--rtae", "1kpps"}, "did you mean --rate?"},
		// recv has no --pcap-speed: no hint that names it.
		{[]string{"recv", "--multiplier", "2"}, ""},
		// Another command's flag says whose it is.
		{[]string{"preview", "--pcap", "x.pcap"}, "--pcap is a flag of wpg send, not of wpg preview"},
		{[]string{"send", "--zzzzzz"}, ""},
	} {
		out, errs, code := runCLI(t, c.args...)
		if code != ExitUsage || out != "" || !strings.Contains(errs, "unknown flag") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want a usage error", c.args, code, out, errs)
			continue
		}
		if c.want == "" {
			if strings.Contains(errs, "did you mean") || strings.Contains(errs, " here") {
				t.Errorf("%v: %q, want no hint", c.args, errs)
			}
		} else if !strings.Contains(errs, c.want) {
			t.Errorf("%v: %q, want %q", c.args, errs, c.want)
		}
	}
}
