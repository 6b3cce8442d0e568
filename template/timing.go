package template

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/wpg-dev/wpg/pace"
)

// MinSpeed and MaxSpeed bound a speed factor of a capture's own timing
// (Timing.Speed: a stream's speed key, `wpg send --pcap-speed`): from a
// thousandth of the capture's pace to a million times it.
const (
	MinSpeed = 1e-3
	MaxSpeed = 1e6
)

// Timing is a stream's own schedule, instead of a share of the run's
// --rate: a rate (or a capture's own timing), a start delay, and a burst
// shape (TRex's continuous, single-burst and multi-burst streams).
type Timing struct {
	// Rate is the stream's frame or bit rate (a bit rate counts the frame
	// as wpg builds it, layer 2, at the stream's mean frame size). It is
	// unlimited only with Original.
	Rate pace.Rate
	// Original replays a capture with its own timing (timing: original):
	// record j goes (ts[j] - ts[0]) / Speed after the stream's start.
	Original bool
	// Speed divides the capture's gaps (2 = twice as fast); 1 when not
	// given.
	Speed float64
	// Delay is the time from the start of the run to the stream's first
	// frame (TRex's inter-stream gap, isg).
	Delay time.Duration
	// BurstFrames is the number of frames of one burst, at Rate; 0 is a
	// continuous stream.
	BurstFrames uint64
	// Bursts is the number of bursts (0 = until the run stops); the
	// stream's Count is BurstFrames × Bursts.
	Bursts uint64
	// Gap is the time from the last frame of a burst to the first frame
	// of the next.
	Gap time.Duration
}

// Timed reports whether the spec's streams keep their own schedules
// (every stream has a Timing): the run is then paced by the streams'
// due times, not by --rate.
func (s *Spec) Timed() bool {
	return len(s.Streams) > 0 && s.Streams[0].Timing != nil
}

type rawBurst struct {
	Frames node `yaml:"frames"`
	Count  node `yaml:"count"`
	Gap    node `yaml:"gap"`
}

// maxDelay bounds a start delay or burst gap: a day is far beyond any
// test, and keeps due times far inside int64 nanoseconds.
const maxDelay = 24 * time.Hour

// duration parses a Go duration at x (path names it), in 0..maxDelay;
// positive requires it above zero.
func (p *parser0) duration(x node, path string, positive bool) (time.Duration, error) {
	s, err := p.text(x, path, "a duration")
	if err != nil {
		return 0, err
	}
	d, perr := time.ParseDuration(s)
	switch {
	case perr != nil:
		return 0, p.errAt(x.n, path, fmt.Sprintf("%q is not a duration", s), "write a number and a unit, e.g. 10ms, 250us or 1.5s")
	case d < 0:
		return 0, p.errAt(x.n, path, fmt.Sprintf("duration %s is negative", s), "use a duration of 0 or more, e.g. 10ms")
	case positive && d == 0:
		return 0, p.errAt(x.n, path, "a gap of 0 would make the bursts one continuous stream", "use a gap above zero, e.g. 1ms, or remove burst.count for one burst")
	case d > maxDelay:
		return 0, p.errAt(x.n, path, fmt.Sprintf("duration %s is above the limit of %v", s, maxDelay), "use at most 24h")
	}
	return d, nil
}

// timing parses a stream's rate, delay, burst and (for a replay) timing
// and speed keys into st.Timing (nil when none is given). It runs after
// the frame size is known (a bit rate needs the mean frame).
func (p *parser0) timing(r *rawStream, path string, st *Stream) error {
	replay := st.Replay != nil
	if !r.Rate.set() && !r.Delay.set() && r.Burst == nil && !r.Timing.set() && !r.Speed.set() {
		return nil
	}
	if !replay {
		for _, k := range []struct {
			x    node
			name string
		}{{r.Timing, "timing"}, {r.Speed, "speed"}} {
			if k.x.set() {
				return p.errAt(k.x.n, path+"."+k.name, k.name+" is for streams that replay a capture", "add pcap: FILE to the stream, or remove "+k.name)
			}
		}
	}
	t := &Timing{Speed: 1}
	if r.Timing.set() {
		s, err := p.text(r.Timing, path+".timing", "original or rate")
		if err != nil {
			return err
		}
		switch s {
		case "original":
			t.Original = true
		case "rate":
		default:
			return p.errAt(r.Timing.n, path+".timing", fmt.Sprintf("unknown timing %q", s), "use timing: original (the capture's own gaps) or timing: rate (the stream's rate:)")
		}
	}
	if r.Speed.set() {
		if !t.Original {
			return p.errAt(r.Speed.n, path+".speed", "speed scales the capture's own timing", "add timing: original, or remove speed (with a rate, the rate sets the pace)")
		}
		s, err := p.text(r.Speed, path+".speed", "a speed factor")
		if err != nil {
			return err
		}
		v, perr := strconv.ParseFloat(strings.TrimSuffix(s, "x"), 64)
		if perr != nil || math.IsNaN(v) || v < MinSpeed || v > MaxSpeed {
			return p.errAt(r.Speed.n, path+".speed", fmt.Sprintf("speed %q is not a factor from 0.001 to 1000000", s), "write e.g. speed: 2 (twice as fast) or speed: 0.5 (half)")
		}
		t.Speed = v
	}
	if t.Original && r.Rate.set() {
		return p.errAt(r.Rate.n, path+".rate", "timing: original sends at the capture's own pace", "remove rate:, or use timing: rate to send at the rate")
	}
	if r.Timing.set() && !t.Original && !r.Rate.set() {
		return p.keyErr(path+".timing", "timing: rate needs a rate", "add rate: e.g. 1000pps or 100Mbps")
	}
	if r.Rate.set() {
		s, err := p.text(r.Rate, path+".rate", "a rate")
		if err != nil {
			return err
		}
		rt, perr := pace.ParseRate(s)
		if perr != nil {
			return p.errAt(r.Rate.n, path+".rate", strings.TrimPrefix(perr.Error(), pace.ErrBadRate.Error()+" "), "write a frame or bit rate, e.g. 1000pps, 250kpps or 100Mbps")
		}
		if rt.Unlimited() {
			return p.errAt(r.Rate.n, path+".rate", fmt.Sprintf("rate %q is flat out; a stream's own rate must be a rate", s), "write e.g. 1000pps, or remove rate: to share the run's --rate by share:")
		}
		if rt.LinkShare() {
			return p.errAt(r.Rate.n, path+".rate", fmt.Sprintf("rate %q is a share of the link; a stream's rate is absolute", s), "write e.g. 1000pps or 1Gbps (a share of the link is for --rate with -i)")
		}
		t.Rate = rt
	} else if !t.Original {
		what, key := "delay", r.Delay.n
		if r.Burst != nil {
			what, key = "burst", nil
		}
		return p.errAt(key, path+"."+what, what+" needs the stream's own rate", "add rate: e.g. 1000pps (the rate of the frames within a burst)")
	}
	if r.Delay.set() {
		d, err := p.duration(r.Delay, path+".delay", false)
		if err != nil {
			return err
		}
		t.Delay = d
	}
	if r.Burst != nil {
		bp := path + ".burst"
		if t.Original {
			return p.keyErr(bp, "bursts shape a stream sent at its rate, not a capture's own timing", "use timing: rate with rate:, or remove burst")
		}
		if r.Count.set() {
			return p.errAt(r.Count.n, path+".count", "count is given by the burst: burst.frames × burst.count", "remove count: (set burst.count for the number of bursts)")
		}
		if !r.Burst.Frames.set() {
			return p.keyErr(bp, "a burst needs its number of frames", "write burst: {frames: 100} (one burst), or burst: {frames: 100, count: 5, gap: 1ms}")
		}
		f, err := p.optFixed(r.Burst.Frames, bp+".frames", ftype{"frame count", fUint, 1 << 40, "100"}, 0)
		if err != nil {
			return err
		}
		if f == 0 {
			return p.errAt(r.Burst.Frames.n, bp+".frames", "a burst of 0 frames sends nothing", "use frames: 1 or more")
		}
		n, err := p.optFixed(r.Burst.Count, bp+".count", ftype{"burst count", fUint, 1 << 40, "5"}, 1)
		if err != nil {
			return err
		}
		t.BurstFrames, t.Bursts = f, n
		if n != 1 {
			if !r.Burst.Gap.set() {
				return p.keyErr(bp, fmt.Sprintf("%s bursts need a gap between them", burstCountWord(n)), "add gap: e.g. 1ms (from the last frame of a burst to the first of the next)")
			}
			if t.Gap, err = p.duration(r.Burst.Gap, bp+".gap", true); err != nil {
				return err
			}
		} else if r.Burst.Gap.set() {
			return p.errAt(r.Burst.Gap.n, bp+".gap", "one burst has no gap", "add count: (the number of bursts), or remove gap")
		}
		if n > 0 && f > (1<<63-1)/n {
			return p.keyErr(bp, "burst.frames × burst.count is too large", "use fewer frames or bursts")
		}
		st.Count = f * n
	}
	if !t.Original {
		fps := t.Rate.FramesPerSecond(meanOf(&st.Size), pace.L2)
		if err := t.Rate.CheckRange(meanOf(&st.Size), pace.L2, 1); err != nil || !(fps > 0) || 1/fps > maxDelay.Seconds() {
			return p.errAt(r.Rate.n, path+".rate", fmt.Sprintf("rate %s is out of range for this stream's %.0f-byte frames", t.Rate, meanOf(&st.Size)), "use a rate from one frame a day to 10¹² frames per second")
		}
		if t.BurstFrames > 0 && float64(t.BurstFrames)/fps > maxDelay.Seconds() {
			return p.keyErr(path+".burst", fmt.Sprintf("one burst of %d frames at %s would last more than a day", t.BurstFrames, t.Rate), "use fewer frames per burst or a higher rate")
		}
	}
	st.Timing = t
	return nil
}

func burstCountWord(n uint64) string {
	if n == 0 {
		return "unlimited"
	}
	return strconv.FormatUint(n, 10)
}

// checkTimed checks that the streams either all keep their own schedules
// or all share the run's rate: a template does not mix the two. shares
// are the streams' share: values.
func (p *parser0) checkTimed(shares []node, s *Spec) error {
	first := -1
	for i := range s.Streams {
		if s.Streams[i].Timing != nil {
			first = i
			break
		}
	}
	if first < 0 {
		return nil
	}
	for i := range s.Streams {
		st := &s.Streams[i]
		path := fmt.Sprintf("streams[%d]", i)
		if st.Timing == nil {
			return p.errAt(nil, path, fmt.Sprintf("stream %d (%s) has no rate of its own while stream %d (%s) has one", i, st.Name, first, s.Streams[first].Name),
				"give every stream its own rate: (or a capture timing: original), or none, so that all share the run's --rate by share:")
		}
		if shares[i].set() {
			return p.errAt(shares[i].n, path+".share", "share weighs streams that share the run's --rate; this stream has its own rate", "remove share:")
		}
	}
	return nil
}

// FramesPerSecond is the long-run frame rate of a timed stream: its rate,
// or for bursts the frames of a burst over the time from one burst's
// start to the next. A capture's own timing has no rate of its own: 0.
func (t *Timing) FramesPerSecond(meanFrame float64) float64 {
	if t.Original {
		return 0
	}
	fps := t.Rate.FramesPerSecond(meanFrame, pace.L2)
	if t.BurstFrames == 0 || t.Bursts == 1 {
		return fps
	}
	span := float64(t.BurstFrames-1)/fps + t.Gap.Seconds()
	return float64(t.BurstFrames) / span
}
