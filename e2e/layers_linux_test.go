//go:build linux

package e2e

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// TestLayersOverVeth: the frames of the new headers (MPLS, GRE, VXLAN,
// Geneve, raw layers, TCP options, the SYN sweep tuple, fragments) cross
// a veth pair into `wpg recv` in the namespace: every signed frame
// arrives once, intact, none lost. The signature is the last 20 bytes of
// the frame whatever the stack, so recv needs to know nothing of it; of
// the fragments, only the last of each datagram carries it.
func TestLayersOverVeth(t *testing.T) {
	for _, c := range []struct {
		file          string
		count, signed int
	}{
		{"mpls", 3000, 3000},
		{"gre", 3000, 3000},
		{"vxlan", 3000, 3000},
		{"geneve", 3000, 3000},
		{"raw", 3000, 3000},
		{"tcp-options", 3000, 3000},
		{"syn-sweep", 762, 762},
		{"fragments", 3000, 1000},
	} {
		t.Run(c.file, func(t *testing.T) {
			v := testbed.NewVeth(t)
			r := startRecv(t, v, "--expect", strconv.Itoa(c.signed), "--idle-timeout", "5s")
			out, errs, code := run(t, t.TempDir(), "send", repoFile(t, "examples/"+c.file+".wpg.yaml"), "-i", v.Outer, "--count", strconv.Itoa(c.count), "--rate", "50kpps", "--json")
			if code != 0 {
				t.Fatalf("wpg send: exit %d: %s %s", code, out, errs)
			}
			var rep map[string]any
			if err := json.Unmarshal([]byte(out), &rep); err != nil || rep["frames"].(float64) != float64(c.count) {
				t.Fatalf("send report %q: %v", out, err)
			}
			res, code := r.wait(t)
			if code != 0 || res.Frames != uint64(c.signed) || res.Lost != 0 || res.Duplicated != 0 || res.Corrupted != 0 || res.Stop != "expect" {
				t.Fatalf("exit %d, report %+v\nstderr: %s", code, res, r.errb.String())
			}
			if c.file == "fragments" && res.Unsigned != uint64(c.count-c.signed) {
				t.Errorf("%d unsigned frames (the first fragments), want %d", res.Unsigned, c.count-c.signed)
			}
		})
	}
}
