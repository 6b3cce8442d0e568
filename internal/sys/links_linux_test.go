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
