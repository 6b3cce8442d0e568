package ndr

import (
	"context"
	"errors"
	"testing"
)

// buffer is a simulated device that holds depth frames: a longer burst
// loses the excess.
type buffer struct {
	depth  uint64
	bursts int
}

func (b *buffer) burst(_ context.Context, n uint64) (Outcome, error) {
	b.bursts++
	return Outcome{Sent: n, Received: min(n, b.depth), AchievedPPS: 1e6}, nil
}

func TestBackToBackFindsTheDepth(t *testing.T) {
	for _, depth := range []uint64{1, 37, 680, 9999} {
		b := &buffer{depth: depth}
		res, err := BackToBack(context.Background(), BurstConfig{MaxBurst: 100000, Resolution: 0.001, Repeat: 3}, b.burst)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Bursts) != 3 || res.Limited {
			t.Fatalf("depth %d: %+v", depth, res)
		}
		for _, got := range res.Bursts {
			if got > depth || float64(got) < float64(depth)*(1-0.002)-1 {
				t.Errorf("depth %d: found %d", depth, got)
			}
		}
		for _, tr := range res.Trials {
			if tr.Pass != (tr.Frames <= depth) {
				t.Errorf("depth %d: burst %d pass=%v", depth, tr.Frames, tr.Pass)
			}
		}
		if len(res.Trials) > 3*32 {
			t.Errorf("depth %d: %d trials", depth, len(res.Trials))
		}
	}
}

func TestBackToBackLimitsAndErrors(t *testing.T) {
	b := &buffer{depth: 1 << 40}
	res, err := BackToBack(context.Background(), BurstConfig{MaxBurst: 5000}, b.burst)
	if err != nil || !res.Limited || res.BurstFrames != 5000 || b.bursts != 1 {
		t.Fatalf("a device deeper than the longest burst: %+v, %v after %d bursts", res, err, b.bursts)
	}
	res, err = BackToBack(context.Background(), BurstConfig{MaxBurst: 5000}, (&buffer{}).burst)
	if err != nil || res.BurstFrames != 0 {
		t.Fatalf("a device that loses every frame: %+v, %v", res, err)
	}
	boom := errors.New("boom")
	if _, err := BackToBack(context.Background(), BurstConfig{MaxBurst: 10}, func(context.Context, uint64) (Outcome, error) { return Outcome{}, boom }); !errors.Is(err, boom) {
		t.Fatalf("burst error: %v", err)
	}
	for _, c := range []BurstConfig{{}, {MaxBurst: 1, Resolution: 2}, {MaxBurst: 1, Repeat: -1}} {
		if _, err := BackToBack(context.Background(), c, b.burst); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}
