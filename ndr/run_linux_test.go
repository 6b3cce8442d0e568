package ndr

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	_ "github.com/wpg-dev/wpg/backend/afpacket" // the sender and the receiver
	"github.com/wpg-dev/wpg/internal/netns"
	"github.com/wpg-dev/wpg/internal/testbed"
	"github.com/wpg-dev/wpg/pace"
)

// TestRunOnVeth: Run, one call, searches each size on a veth pair in a
// namespace of its own, says when the path is ready and as each trial
// ends, and removes the namespace on return.
func TestRunOnVeth(t *testing.T) {
	testbed.RequireRoot(t)
	testbed.RequireTool(t, "ip", "iproute2")
	maxRate, err := pace.ParseRate("50kpps")
	if err != nil {
		t.Fatal(err)
	}
	var started []Report
	trials := map[int]int{}
	rep, err := Run(context.Background(), Setup{
		Sizes:   []int{64, 512},
		MaxRate: maxRate,
		Search:  Config{Trial: 300 * time.Millisecond, Warmup: 100 * time.Millisecond, Resolution: 0.2},
		Started: func(r Report) { started = append(started, r) },
		OnTrial: func(size int, _ Trial) { trials[size]++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(started) != 1 || started[0].Namespace == "" || started[0].Sender == "" || started[0].Receiver == "" {
		t.Fatalf("Started calls: %+v", started)
	}
	if rep.Schema != Schema || rep.Namespace != started[0].Namespace || len(rep.Sizes) != 2 {
		t.Fatalf("report: %+v", rep)
	}
	for _, s := range rep.Sizes {
		if s.Frame != s.Size-4 || s.ThroughputPPS <= 0 || len(s.Trials) < 2 || !s.Trials[0].Warmup {
			t.Errorf("size %d: frame %d, throughput %v, %d trials", s.Size, s.Frame, s.ThroughputPPS, len(s.Trials))
		}
		if trials[s.Size] != len(s.Trials) {
			t.Errorf("size %d: OnTrial called %d times for %d trials", s.Size, trials[s.Size], len(s.Trials))
		}
	}
	ns, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(ns), rep.Namespace) {
		t.Fatalf("namespace %s left behind:\n%s", rep.Namespace, ns)
	}
}

// TestHarnessMeasures: a trial returns both ends' results in full, not
// only a loss count: a slow trial on a veth pair arrives whole, and the
// receiver's result says so frame by frame.
func TestHarnessMeasures(t *testing.T) {
	testbed.RequireRoot(t)
	testbed.RequireTool(t, "ip", "iproute2")
	ns, err := netns.New(context.Background(), netns.Options{})
	if err != nil {
		testbed.Skip(t, "no namespace with a veth pair: %v", err)
	}
	defer ns.Close()
	h := Harness{Sender: ns.Outer, Receiver: ns.Inner, ns: ns}
	m, err := h.Trial(context.Background(), 124, 2000, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if m.Sender == nil || m.Sender.Frames == 0 {
		t.Fatalf("sender: %+v", m.Sender)
	}
	r := m.Receiver
	if r.Frames != m.Sender.Frames || r.Lost != 0 || r.Duplicated != 0 || r.Corrupted != 0 || r.Bytes != r.Frames*124 {
		t.Errorf("receiver: %d frames, %d bytes, lost %d, dup %d, corrupted %d; the sender sent %d of 124 B", r.Frames, r.Bytes, r.Lost, r.Duplicated, r.Corrupted, m.Sender.Frames)
	}
	if o := m.Outcome(); o.Sent != m.Sender.Frames || o.Received != r.Frames || o.AchievedPPS != m.Sender.PPS {
		t.Errorf("outcome %+v of %d sent, %d received", o, m.Sender.Frames, r.Frames)
	}
}
