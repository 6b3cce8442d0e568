package job

import (
	"testing"
	"time"

	"github.com/wpg-dev/wpg/report"
)

// TestSampleCarriesReceiverLoss: a run with its own receivers gives every
// interval its loss, the ones before the receivers' first progress message
// too (0: nothing reported yet), and the intervals' loss sums to the run's
// whatever the receivers reported in between (a late frame takes a gap
// back). The first --interval entries of an shm run used to have no lost.
func TestSampleCarriesReceiverLoss(t *testing.T) {
	at := func(ms int, frames uint64, r *ReceiverSnapshot) Snapshot {
		return Snapshot{Elapsed: time.Duration(ms) * time.Millisecond, Frames: frames, Bytes: frames * 64, Receiver: r, peer: true}
	}
	snaps := []Snapshot{
		at(100, 1000, nil), // before the receivers' first message
		at(200, 2000, nil),
		at(300, 3000, &ReceiverSnapshot{Receivers: 1, Frames: 2500, Lost: 5, Corrupted: 1}),
		at(400, 4000, &ReceiverSnapshot{Receivers: 1, Frames: 3500, Lost: 3, Corrupted: 1}),
	}
	end := at(450, 4500, &ReceiverSnapshot{Receivers: 1, Frames: 4493, Lost: 7, Corrupted: 2, Final: true})
	var iv report.Intervals
	var prev Snapshot
	for _, s := range snaps {
		if _, ok := iv.Add(s.Sample(prev)); !ok {
			t.Fatalf("sample at %v refused", s.Elapsed)
		}
		prev = s
	}
	list := iv.Finish(end.Sample(prev))
	var lost int64
	var corrupted uint64
	for i, in := range list {
		if in.Lost == nil || in.Corrupted == nil {
			t.Fatalf("interval %d (%.1f-%.1f s) has no lost or corrupted: %+v", i, in.Start, in.End, in)
		}
		lost += *in.Lost
		corrupted += *in.Corrupted
	}
	if lost != 7 || corrupted != 2 {
		t.Errorf("intervals sum to lost %d corrupted %d, the run has 7 and 2", lost, corrupted)
	}
	if len(list) != 5 {
		t.Errorf("%d intervals, want 5", len(list))
	}
}

// TestSampleWithoutReceiver: a run without its own receivers (a network
// path, null) has no loss to report: the sample leaves it out, so that no
// interval claims a loss of 0 that nothing measured.
func TestSampleWithoutReceiver(t *testing.T) {
	x := Snapshot{Elapsed: time.Second, Frames: 10}.Sample(Snapshot{})
	if x.Lost != nil || x.Corrupted != nil {
		t.Errorf("sample of a run without receivers carries lost %v corrupted %v", x.Lost, x.Corrupted)
	}
	if x.Frames != 10 || x.Elapsed != time.Second {
		t.Errorf("sample %+v, want 10 frames at 1s", x)
	}
}
