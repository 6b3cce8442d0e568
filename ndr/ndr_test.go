package ndr

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"
)

// device is a simulated path that forwards everything up to knee frames/s
// and drops the excess beyond it; the sender reaches at most senderMax.
type device struct {
	knee, senderMax float64
	trials          int
}

func (d *device) trial(_ context.Context, rate float64, dur time.Duration) (Outcome, error) {
	d.trials++
	achieved := rate
	if d.senderMax > 0 {
		achieved = min(rate, d.senderMax)
	}
	sent := uint64(achieved * dur.Seconds())
	recv := sent
	if achieved > d.knee {
		recv = uint64(float64(sent) * d.knee / achieved)
	}
	return Outcome{Sent: sent, Received: recv, AchievedPPS: achieved}, nil
}

func TestSearchFindsTheKnee(t *testing.T) {
	for _, knee := range []float64{12345, 734_000, 2.9e6, 9.99e6} {
		d := &device{knee: knee}
		res, err := Search(context.Background(), Config{MaxRate: 10e6, Resolution: 0.005, Trial: time.Second}, d.trial)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Converged || res.Limited {
			t.Errorf("knee %v: converged %v, limited %v", knee, res.Converged, res.Limited)
		}
		if res.ThroughputPPS > knee || res.ThroughputPPS < knee*(1-0.005) {
			t.Errorf("knee %v: throughput %v, want within 0.5 %% below the knee", knee, res.ThroughputPPS)
		}
		if len(res.Trials) > 32 {
			t.Errorf("knee %v: %d trials", knee, len(res.Trials))
		}
		for _, tr := range res.Trials {
			if tr.Pass != (tr.Rate <= knee) {
				t.Errorf("knee %v: trial at %v pass=%v", knee, tr.Rate, tr.Pass)
			}
		}
	}
}

// A path faster than the maximum passes the first trial and says so.
func TestSearchLimitedByMax(t *testing.T) {
	d := &device{knee: 5e6}
	res, err := Search(context.Background(), Config{MaxRate: 1e6, Trial: time.Second}, d.trial)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Limited || res.ThroughputPPS != 1e6 || d.trials != 1 {
		t.Fatalf("limited %v, throughput %v after %d trials", res.Limited, res.ThroughputPPS, d.trials)
	}
}

// The figure is what the sender achieved, never more than it could send.
func TestSearchReportsAchievedRate(t *testing.T) {
	d := &device{knee: 3e6, senderMax: 1.5e6}
	res, err := Search(context.Background(), Config{MaxRate: 10e6, Trial: time.Second}, d.trial)
	if err != nil {
		t.Fatal(err)
	}
	if res.ThroughputPPS > 1.5e6 || !res.SenderLimited {
		t.Fatalf("throughput %v (sender limited: %v), want at most what the sender achieved, 1.5e6, and said so", res.ThroughputPPS, res.SenderLimited)
	}
	d = &device{knee: 1e6}
	if res, _ := Search(context.Background(), Config{MaxRate: 10e6, Trial: time.Second}, d.trial); res.SenderLimited {
		t.Fatal("a sender that kept up is called the limit")
	}
}

// An allowed loss ratio moves the figure to where that much is lost.
func TestSearchPartialDrop(t *testing.T) {
	d := &device{knee: 1e6}
	res, err := Search(context.Background(), Config{MaxRate: 4e6, Loss: 0.2, Resolution: 0.001, Trial: time.Second}, d.trial)
	if err != nil {
		t.Fatal(err)
	}
	want := 1e6 / 0.8 // loss = 1 − knee/rate = 0.2
	if math.Abs(res.ThroughputPPS-want)/want > 0.002 {
		t.Fatalf("throughput %v, want about %v", res.ThroughputPPS, want)
	}
}

// A path that loses even at the floor has no throughput.
func TestSearchNothingPasses(t *testing.T) {
	d := &device{knee: 1}
	res, err := Search(context.Background(), Config{MaxRate: 1e6, MinRate: 1000, Trial: time.Second}, d.trial)
	if err != nil {
		t.Fatal(err)
	}
	if res.ThroughputPPS != 0 || res.Converged {
		t.Fatalf("throughput %v converged %v", res.ThroughputPPS, res.Converged)
	}
	if last := res.Trials[len(res.Trials)-1]; last.Rate != 1000 {
		t.Fatalf("last trial at %v, want the floor 1000", last.Rate)
	}
}

func TestSearchWarmupNotCounted(t *testing.T) {
	d := &device{knee: 5e5}
	res, err := Search(context.Background(), Config{MaxRate: 1e6, Warmup: time.Second, Trial: time.Second}, d.trial)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Trials[0].Warmup || res.Trials[1].Warmup {
		t.Fatal("the first trial alone must be the warm-up")
	}
}

func TestSearchErrors(t *testing.T) {
	boom := errors.New("boom")
	_, err := Search(context.Background(), Config{MaxRate: 1e6}, func(context.Context, float64, time.Duration) (Outcome, error) {
		return Outcome{}, boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("trial error not returned: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Search(ctx, Config{MaxRate: 1e6}, (&device{knee: 1}).trial); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled search: %v", err)
	}
	for _, c := range []Config{{}, {MaxRate: -1}, {MaxRate: 1, MinRate: 2}, {MaxRate: 1, Resolution: 1}, {MaxRate: 1, Loss: 1}, {MaxRate: 1, MaxTrials: 5000}, {MaxRate: 1, Trial: -time.Second}} {
		if _, err := Search(context.Background(), c, (&device{knee: 1}).trial); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}
