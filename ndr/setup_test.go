package ndr

import (
	"context"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/pace"
)

// TestRunRefusesBadSetups: a setup Run cannot search is refused before
// anything is created (no namespace, no trial), with what to change.
func TestRunRefusesBadSetups(t *testing.T) {
	rate := func(s string) pace.Rate {
		r, err := pace.ParseRate(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, c := range []struct {
		s    Setup
		want string
	}{
		{Setup{}, "maximum rate"},
		{Setup{MaxRate: rate("50%")}, "maximum rate"},
		{Setup{MaxRate: rate("1Mpps"), Sizes: []int{32}}, "64 to 9022"},
		{Setup{MaxRate: rate("1Mpps"), Sizes: []int{64, 128, 64}}, "given twice"},
		{Setup{MaxRate: rate("1Mpps"), MinRate: rate("2Mpps")}, "above the maximum rate"},
		{Setup{MaxRate: rate("1Gbps"), MinRate: rate("100kpps"), Sizes: []int{1518}}, "at 1518 B"},
		{Setup{MaxRate: rate("1Mpps"), Backend: "pipe"}, "afpacket or afxdp"},
		{Setup{MaxRate: rate("1Mpps"), Backend: "afxdp", QdiscBypass: true}, "afpacket option"},
		{Setup{MaxRate: rate("1Mpps"), Search: Config{Loss: 1}}, "loss"},
		{Setup{MaxRate: rate("1Mpps"), Interface: "eth1"}, "go together"},
		{Setup{MaxRate: rate("1Mpps"), Interface: "eth1", RxInterface: "eth1"}, "both name eth1"},
		{Setup{MaxRate: rate("1Mpps"), SrcIP: "198.18.0.1/24"}, "give Interface and RxInterface"},
		{Setup{MaxRate: rate("1Mpps"), Bidir: true}, "give Interface and RxInterface"},
		{Setup{MaxRate: rate("1Mpps"), Router: true, Interface: "eth1", RxInterface: "eth2"}, "Router builds the path"},
		{Setup{MaxRate: rate("1Mpps"), RouterShape: 20e6}, "with Router"},
		{Setup{MaxRate: rate("1Mpps"), BackToBack: &BurstConfig{}}, "longest burst"},
	} {
		rep, err := Run(context.Background(), c.s)
		if rep != nil || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: report %v, error %v; want %q", c.s, rep, err, c.want)
		}
	}
}
