package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/ndr"
)

// TestNDRFlagRefusals: flags ndr cannot search with are refused before
// anything starts (no namespace, no trial), with exit 2 and the flag named.
func TestNDRFlagRefusals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ndr", "--resolution", "200%"}, "flag --resolution"},
		{[]string{"ndr", "--resolution", "1"}, "flag --resolution"},
		{[]string{"ndr", "--loss", "100%"}, "flag --loss"},
		{[]string{"ndr", "--max-trials", "0"}, "flag --max-trials"},
		{[]string{"ndr", "--warmup", "-1s"}, "flag --warmup"},
		{[]string{"ndr", "--min-rate", "20Gbps"}, "above --max-rate"},
		{[]string{"ndr", "--sizes", "1518", "--max-rate", "1Mpps", "--min-rate", "2Mpps"}, "at 1518 B"},
		{[]string{"ndr", "-i", "wpg-nonesuch0", "--rx-interface", "lo"}, `flag -i: interface "wpg-nonesuch0" does not exist`},
		{[]string{"ndr", "-i", "lo", "--rx-interface", "wpg-nonesuch1"}, "flag --rx-interface"},
		// The receiver never counts the host's own outgoing frames.
		{[]string{"ndr", "-i", "lo", "--rx-interface", "lo"}, "both name lo, and the receiver does not count the frames this host sends"},
		// A size given twice would search it twice (and repeat its row).
		{[]string{"ndr", "--sizes", "64,64"}, `flag --sizes: value "64,64": 64 and 64 are the same size (64 B): give each size once`},
		{[]string{"ndr", "--sizes", "128, 64,128B"}, `128 and 128B are the same size`},
		// A back-to-back setting without the test would be ignored.
		{[]string{"ndr", "--b2b-max", "5"}, "flag --b2b-max: tunes the back-to-back test, and it is not asked for: add --back-to-back, or drop --b2b-max"},
		{[]string{"ndr", "--b2b-repeat", "50"}, "flag --b2b-repeat: tunes the back-to-back test"},
		// A resolution of 0 is never reached: every size ran out of trials.
		{[]string{"ndr", "--resolution", "0"}, `flag --resolution: value "0": give a share of the rate above 0 and below 100 %`},
	} {
		out, errs, code := runCLI(t, c.args...)
		if code != ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, errs, ExitUsage, c.want)
		}
		if out != "" {
			t.Errorf("%v: printed %q before refusing", c.args, out)
		}
	}
}

// TestNDRTableNamesAnError: a search an error ended says so in its row,
// not "loss even at --min-rate" for a size that never ran a trial.
func TestNDRTableNamesAnError(t *testing.T) {
	var b bytes.Buffer
	printNDR(&b, ndrReport{
		Sizes: []ndrSize{{Size: 64, Result: ndr.Result{ThroughputPPS: 1000, Converged: true}}, {Size: 128}},
		Error: "ndr: trial at 14880952 frames/s: receiver on eth2: no such interface",
	})
	lines := strings.Split(b.String(), "\n")
	var row128 string
	for _, l := range lines {
		if strings.HasPrefix(l, "128 B") {
			row128 = l
		}
	}
	if !strings.Contains(row128, "stopped by an error") || strings.Contains(b.String(), "loss even at") {
		t.Errorf("table:\n%s\nwant the 128 B row to say an error stopped it", b.String())
	}
}
