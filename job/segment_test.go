package job_test

import (
	"strings"
	"testing"
	"time"

	_ "github.com/wpg-dev/wpg/backend/null"
	_ "github.com/wpg-dev/wpg/backend/shm"
	"github.com/wpg-dev/wpg/job"
)

func TestParseSegment(t *testing.T) {
	for _, c := range []struct {
		in   string
		i, n int
		bad  string
	}{
		{"", 0, 1, ""},
		{"0/1", 0, 1, ""},
		{"2/3", 2, 3, ""},
		{" 1 / 4 ", 1, 4, ""},
		{"3/3", 0, 0, "index 3, outside 0 … 2 of 3 segments"},
		{"0/0", 0, 0, "0 segments"},
		{"-1/2", 0, 0, "index -1"},
		{"a/b", 0, 0, "not a segment"},
		{"1", 0, 0, "not a segment"},
		{"0/257", 0, 0, "257 segments"},
	} {
		i, n, err := job.ParseSegment(c.in)
		switch {
		case c.bad == "" && (err != nil || i != c.i || n != c.n):
			t.Errorf("%q: %d, %d, %v", c.in, i, n, err)
		case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)):
			t.Errorf("%q: error %v, want %q", c.in, err, c.bad)
		}
	}
}

// TestSegmentProblems: bad segments, and segments of what cannot be
// split, are the segment field's problem with a fix.
func TestSegmentProblems(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*job.Spec)
		want string
	}{
		{"out of range", func(s *job.Spec) { s.Segment = "3/3" }, "outside 0 … 2"},
		{"no segments", func(s *job.Spec) { s.Segment = "0/0" }, "0 segments"},
		{"not a segment", func(s *job.Spec) { s.Segment = "a/b" }, "not a segment"},
		{"payload frames", func(s *job.Spec) { s.Segment, s.Backend = "0/2", "shm" }, "moves payload frames"},
		{"too many senders", func(s *job.Spec) { s.Segment, s.Workers = "0/100", 3 }, "300 senders"},
		{"timed streams and a count", func(s *job.Spec) {
			s.Segment, s.Template, s.Count = "0/2", "../examples/stream-rates.wpg.yaml", 100
		}, "cannot be split exactly"},
	} {
		s := job.NewSpec()
		c.edit(&s)
		err := job.Validate(s, job.Env{})
		ps := job.AsProblems(err)
		if len(ps) == 0 || ps[0].Field != "segment" || !strings.Contains(ps[0].Error(), c.want) || ps[0].Fix == "" {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestSegmentsShareTheJob runs the three segments of a --count on the
// null backend: each sends its third, ends on the count, names its
// segment and the job's identity, which a job with another count does
// not share; a segment with nothing to do says so and ends cleanly.
func TestSegmentsShareTheJob(t *testing.T) {
	var ids []string
	var total uint64
	for i := range 3 {
		s := job.NewSpec()
		s.Template = "../examples/mixed.wpg.yaml"
		s.Count = 30000
		s.Segment = []string{"0/3", "1/3", "2/3"}[i]
		rep, _ := noted(t, s, "")
		if rep.Frames != 10000 || rep.Stop != "count" || rep.Segment != s.Segment || rep.Error != "" {
			t.Errorf("segment %s: %d frames, stop %s, segment %q, error %q", s.Segment, rep.Frames, rep.Stop, rep.Segment, rep.Error)
		}
		var streams uint64
		for _, st := range rep.Streams {
			streams += st.Frames
		}
		if streams != rep.Frames {
			t.Errorf("segment %s: streams add up to %d", s.Segment, streams)
		}
		if _, err := time.Parse(time.RFC3339Nano, rep.Started); err != nil {
			t.Errorf("started %q: %v", rep.Started, err)
		}
		ids = append(ids, rep.Job)
		total += rep.Frames
	}
	if ids[0] == "" || ids[0] != ids[1] || ids[1] != ids[2] || total != 30000 {
		t.Errorf("job identities %v, %d frames in all", ids, total)
	}
	other := job.NewSpec()
	other.Template, other.Count, other.Segment = "../examples/mixed.wpg.yaml", 30001, "0/3"
	if id, err := job.Identity(other); err != nil || id == ids[0] {
		t.Errorf("another count: identity %q, %v", id, err)
	}
	same := other
	same.Count, same.Segment, same.Backend, same.Batch = 30000, "2/3", "pcapfile", 7
	if id, _ := job.Identity(same); id != ids[0] {
		t.Errorf("another segment, backend and batch of the same job: identity %q, want %q", id, ids[0])
	}

	s := job.NewSpec()
	s.Template, s.Count, s.Segment = "../examples/mixed.wpg.yaml", 2, "2/3"
	rep, note := noted(t, s, "nothing to send")
	if rep.Frames != 0 || note == "" || rep.Error != "" || rep.Failed != nil {
		t.Errorf("segment 2/3 of --count 2: %d frames, note %q, error %q", rep.Frames, note, rep.Error)
	}
}

// TestSegmentRate gives each segment its share of the rate.
func TestSegmentRate(t *testing.T) {
	s := job.NewSpec()
	s.Rate, s.Count, s.Segment = "30kpps", 300, "1/3"
	rep, _ := noted(t, s, "")
	if rep.TargetPPS != 10000 || rep.Frames != 100 {
		t.Errorf("segment 1/3 of 30kpps: target %v pps, %d frames", rep.TargetPPS, rep.Frames)
	}
}
