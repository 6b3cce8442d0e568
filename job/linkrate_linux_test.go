package job

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed"
	"github.com/wpg-dev/wpg/pace"
)

// TestLinkRateInNetns: --rate 50% of a port in another network namespace
// (--netns) is a share of that port's link, read in its namespace: not
// of the caller's /sys/class/net, which shows the caller's links (here a
// bridge by the same name, which reports none), and a port that is down
// there has none.
func TestLinkRateInNetns(t *testing.T) {
	v := testbed.NewVeth(t)
	if out, err := exec.Command("ip", "link", "add", v.Inner, "type", "bridge").CombinedOutput(); err != nil {
		t.Fatalf("ip link add %s type bridge: %v %s", v.Inner, err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "link", "del", v.Inner).Run() })
	exec.Command("ip", "link", "set", v.Inner, "up").Run()
	half, err := pace.ParseRate("50%")
	if err != nil {
		t.Fatal(err)
	}
	s := Spec{Interface: v.Inner, Netns: v.NS, Rate: "50%"}
	var p problems
	r, note, ok := linkRate(&p, s, half)
	if !ok || p.err() != nil || r.FramesPerSecond(1226, pace.L1) != 500_000 || !strings.Contains(note, "10000 Mb/s") {
		t.Fatalf("50%% of %s in %s (a veth, 10000 Mb/s): ok %v, %v, %.0f frames/s of 1226 bytes (1250 on the wire), note %q; want 500000", v.Inner, v.NS, ok, p.err(), r.FramesPerSecond(1226, pace.L1), note)
	}
	if out, err := exec.Command("ip", "-n", v.NS, "link", "set", v.Inner, "down").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	p = problems{}
	if _, _, ok := linkRate(&p, s, half); ok || p.err() == nil || !strings.Contains(p.err().Error(), "reports no link speed") || !strings.Contains(p.err().Error(), v.NS) {
		t.Errorf("the port down in %s: ok %v, %v; want no link speed, naming the namespace", v.NS, ok, p.err())
	}
}
