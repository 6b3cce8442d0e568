package pace

import (
	"math"
	"sync/atomic"
	"testing"
)

// listTable is a Timetable of fixed due times (ns from the origin).
type listTable struct {
	at     []int64
	origin int64
	next   int
}

func (l *listTable) Start(o int64) { l.origin = o }
func (l *listTable) NextDue() (int64, bool) {
	if l.next >= len(l.at) {
		return 0, false
	}
	return l.origin + l.at[l.next], true
}
func (l *listTable) DueBy(ns int64, max int) int {
	n := 0
	for i := l.next; i < len(l.at) && n < max && l.origin+l.at[i] <= ns; i++ {
		n++
	}
	return n
}

// TestFollowKeepsTheTimetable: a following pacer releases each frame at
// its own due time (frames within the 1 µs resolution together), never
// before, and late frames at once, all of them.
func TestFollowKeepsTheTimetable(t *testing.T) {
	at := []int64{0, 10_000, 10_200, 10_500, 50_000, 2_000_000, 2_000_900, 2_001_800, 9_000_000}
	for _, mode := range []WaitMode{Spin, Hybrid, Sleep} {
		f := &fakeClock{now: 1e9, step: 50}
		p := New(Config{FPS: 1000, Wait: mode, Clock: newFakeClock(f)})
		tt := &listTable{at: at}
		p.Follow(tt)
		if err := p.Setup(); err != nil {
			t.Fatal(err)
		}
		var stop atomic.Bool
		for tt.next < len(at) {
			n := p.Grant(64, &stop)
			now := f.now
			due := tt.origin + at[tt.next]
			if now < due {
				t.Fatalf("%v: frame %d granted at %d, before its due time %d", mode, tt.next, now, due)
			}
			res := p.resolution()
			for j := 0; j < n; j++ {
				if d := tt.origin + at[tt.next+j]; d > now+res {
					t.Fatalf("%v: frame %d due %d ns after the grant", mode, tt.next+j, d-now)
				}
			}
			tt.next += n
		}
		if n := p.Grant(64, &stop); n != 64 {
			t.Errorf("%v: an exhausted timetable grants %d, want all (the source ends the run)", mode, n)
		}
		st := p.Stats()
		if st.Frames != int64(len(at)) || st.Grants == 0 {
			t.Errorf("%v: stats %+v", mode, st)
		}
	}
	// Late: a caller that stalls 5 ms gets every overdue frame in one grant
	// (none is skipped, unlike a fixed rate's 10 ms catch-up window).
	f := &fakeClock{now: 0, step: 10}
	p := New(Config{FPS: 1000, Wait: Spin, Clock: newFakeClock(f)})
	tt := &listTable{at: at}
	p.Follow(tt)
	var stop atomic.Bool
	tt.next += p.Grant(64, &stop) // frame 0, the origin
	f.now += 5_000_000
	if n := p.Grant(64, &stop); n != 7 {
		t.Errorf("after a stall: %d frames, want the 7 overdue", n)
	}
	if p.Stats().LatenessMaxNs < 4_900_000 {
		t.Errorf("lateness %+v", p.Stats())
	}
	p.Return(2)
	if p.Stats().Frames != 6 {
		t.Errorf("after Return: %d frames", p.Stats().Frames)
	}
}

// TestLinkShare: 50% of a 10 Gbit/s link is 5 Gbit/s at layer 1, whatever
// the layer asked for; unresolved it has no frame rate.
func TestLinkShare(t *testing.T) {
	r, err := ParseRate("50%")
	if err != nil || !r.LinkShare() || r.Resolved() || r.String() != "50%" {
		t.Fatalf("%v %v", r, err)
	}
	if fps := r.FramesPerSecond(60, L2); fps != 0 {
		t.Errorf("unresolved: %v fps", fps)
	}
	r = r.OfLink(10e9)
	for _, l := range []Layer{L1, L2} {
		if fps := r.FramesPerSecond(60, l); math.Abs(fps-5e9/(8*84)) > 1e-6 {
			t.Errorf("%v: %v fps, want %v", l, fps, 5e9/(8*84))
		}
	}
	if s := r.Split(2).FramesPerSecond(60, L2); math.Abs(s-2.5e9/(8*84)) > 1e-6 {
		t.Errorf("split: %v", s)
	}
	for _, bad := range []string{"0%", "101%", "x%", "-5%"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
