package job

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/wpg-dev/wpg/internal/printable"
	"github.com/wpg-dev/wpg/template"
)

// Gaps of a capture replayed with its own timing (timing: original, or
// wpg send --pcap without a rate): a gap of the capture, divided by the
// speed, is a time the run sends nothing.
const (
	// maxSilentGap is the longest such wait taken without a speed given:
	// a capture with a longer gap (a year, between two sessions) is
	// refused before anything is sent, naming the record.
	maxSilentGap = time.Hour
	// noteGap is the wait from which the report notes it.
	noteGap = time.Minute
)

// captureGaps checks the longest gap of every capture replayed with its
// own timing (LoadCaptures has read them): a wait over maxSilentGap
// without a speed given is a problem (false); with one, and any wait over
// noteGap, a note.
func captureGaps(p *problems, s Spec, spec *template.Spec) ([]string, bool) {
	var notes []string
	ok := true
	for i, st := range spec.Streams {
		if st.Replay == nil || st.Timing == nil || !st.Timing.Original {
			continue
		}
		sum, loaded := st.Replay.Summary()
		if !loaded || sum.MaxGapRecord == 0 {
			continue
		}
		speed := st.Timing.Speed
		if speed <= 0 {
			speed = 1
		}
		wait := time.Duration(float64(sum.MaxGapNs) / speed)
		if wait <= noteGap {
			continue
		}
		given := speed != 1
		if s.Pcap != "" {
			given = s.PcapSpeed != 0
		}
		what := fmt.Sprintf("record %d of %s comes %s after the one before it", sum.MaxGapRecord, printable.Escape(st.Replay.File), longWait(time.Duration(sum.MaxGapNs)))
		// The speed that makes the wait a second, within the speeds taken.
		fast := math.Min(1e6, math.Max(2, math.Ceil(float64(sum.MaxGapNs)/float64(time.Second))))
		if !given && wait > maxSilentGap {
			ok = false
			reason := what + ": replayed with the capture's own timing, the run would send nothing for that long"
			if s.Pcap != "" {
				p.add("pcap", s.Pcap, reason, fmt.Sprintf("give {pcap_speed} to shorten the capture's gaps ({pcap_speed} %s makes this one %s), or {rate} to send at a rate of your own",
					strconv.FormatFloat(fast, 'g', -1, 64), longWait(time.Duration(float64(sum.MaxGapNs)/fast))))
			} else {
				p.add("template", "", fmt.Sprintf("stream %d (%s): %s", i, printable.Escape(st.Name), reason),
					fmt.Sprintf("give stream %d a speed: (speed: %s makes this gap %s), or timing: rate with a rate:", i, strconv.FormatFloat(fast, 'g', -1, 64), longWait(time.Duration(float64(sum.MaxGapNs)/fast))))
			}
			continue
		}
		notes = append(notes, fmt.Sprintf("%s: at speed %s the run sends nothing for %s before it; raise the speed, or give a rate", what, strconv.FormatFloat(speed, 'g', -1, 64), longWait(wait)))
	}
	return notes, ok
}

// longWait writes d for people: in days from two days on.
func longWait(d time.Duration) string {
	if d >= 48*time.Hour {
		return strconv.FormatFloat(math.Round(d.Hours()/24*10)/10, 'f', -1, 64) + " days"
	}
	return d.Round(time.Millisecond).String()
}
