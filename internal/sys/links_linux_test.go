package sys

import "testing"

// TestLinksHasLoopback: the namespace's interfaces include lo, with no
// kind and no peer.
func TestLinksHasLoopback(t *testing.T) {
	links, err := Links()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		if l.Name == "lo" {
			if l.Index <= 0 || l.Kind != "" || l.PeerElsewhere {
				t.Errorf("lo: %+v", l)
			}
			return
		}
	}
	t.Errorf("no lo among %+v", links)
}

// TestEthtoolSpeed: lo has no link settings (an error), and an interface
// that is not there is an error too.
func TestEthtoolSpeed(t *testing.T) {
	if mbps, err := EthtoolSpeed("lo"); err == nil {
		t.Errorf("lo: %d Mb/s, want an error (no link settings)", mbps)
	}
	if _, err := EthtoolSpeed("wpg-nonesuch0"); err == nil {
		t.Error("a missing interface has a speed")
	}
}
