package pace

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/wpg-dev/wpg/internal/inputerr"
)

// Layer says which bytes a bit rate counts.
type Layer uint8

const (
	// L2 counts the frame as wpg builds it (destination MAC to the end of
	// the payload, no FCS). It is the default.
	L2 Layer = iota
	// L1 also counts what the wire adds to every frame: preamble and SFD
	// (8 B), the 4-byte FCS the NIC appends, and the 12-byte minimum
	// inter-frame gap: L1Overhead bytes in all.
	L1
)

// L1Overhead is the per-frame byte count --rate-layer l1 adds to a frame as
// wpg builds it: 7 B preamble + 1 B SFD + 4 B FCS + 12 B inter-frame gap.
// With it, 60-byte frames (64 on the wire) at 10Gbps give the textbook
// 14.88 Mpps.
const L1Overhead = 24

var layerWords = words[Layer]{{"l2", L2}, {"l1", L1}}

// ParseLayer parses --rate-layer: "l2" (or "") and "l1", case-insensitive.
func ParseLayer(s string) (Layer, error) {
	if l, ok := layerWords.parse(s); ok {
		return l, nil
	}
	want := fmt.Sprintf("l2 (count frame bytes, the default) or l1 (also count preamble, FCS and inter-frame gap, %d B per frame)", L1Overhead)
	return L2, inputerr.Worded(nil, fmt.Sprintf("rate layer %q: want %s", s, want), "is not a rate layer", "use "+want)
}

// String returns "l2" or "l1".
func (l Layer) String() string { return layerWords.name(l) }

// Bits is the bits that frames of frameBytes bytes in all (as wpg builds
// them) count at layer l: frameBytes × 8 at L2, with L1Overhead bytes
// more per frame at L1. Every bit rate wpg reports is Bits over seconds.
func (l Layer) Bits(frameBytes, frames uint64) float64 {
	if l == L1 {
		frameBytes += frames * L1Overhead
	}
	return float64(frameBytes) * 8
}

type rateKind uint8

const (
	kindUnlimited rateKind = iota
	kindFrames             // pps or fps: frames per second
	kindBits               // bits per second
	kindIFG                // a fixed interval between frame starts
	kindLink               // a share of the link's speed (--rate 50%), resolved by OfLink
)

// Rate is a parsed --rate. The zero value is unlimited.
type Rate struct {
	kind  rateKind
	value float64       // frames/s for kindFrames, bits/s for kindBits
	ifg   time.Duration // kindIFG
	unit  string        // "pps" or "fps" for kindFrames, for String
	// share is the fraction of the link of a kindLink rate; linkBps the
	// link's speed once resolved (OfLink), 0 before.
	share, linkBps float64
}

// ErrBadRate is wrapped by every ParseRate error.
var ErrBadRate = errors.New("bad rate")

const rateExamples = `examples: 1Mpps, 250kpps, 1000pps, 15fps, 10Gbps, 500Mbps, 2.5Gbit/s, ifg=10us; empty = unlimited`

// badRate is ParseRate's error about s: text is the message after the
// value, why and fix the same apart (inputerr), each with the examples.
func badRate(s, text, why, fix string) error {
	return inputerr.Worded(ErrBadRate, fmt.Sprintf("%s %q: %s (%s)", ErrBadRate, s, text, rateExamples), why, fix+" ("+rateExamples+")")
}

// ParseRate parses --rate:
//
//   - frames per second: "1000pps", "250kpps", "1.5Mpps", "15fps" (also
//     "kfps"/"Mfps"); prefixes k (10³), M (10⁶), G (10⁹) in either case,
//     so TRex's "1mpps" is 1Mpps (nobody means milli-packets);
//   - bits per second: "500Mbps", "10Gbps", "2.5Gbit/s", "800kbps", TRex's
//     "10gbps", tc's and trafgen's "100mbit", "1Mbit", iperf3's prefix
//     alone "10M" (prefixes k, M, G, T in either case; Ki, Mi, Gi, Ti,
//     powers of 1024, before bit: "1Mibit"); counted at the layer given to
//     FramesPerSecond;
//   - "<p>%": p percent (0 < p <= 100) of the link's speed, counted at
//     layer 1 (what the link carries) whatever the layer given; it has no
//     frame rate until OfLink gives it the speed;
//   - "ifg=<duration>": a fixed interval between the starts of consecutive
//     frames, in Go duration syntax ("10us", "1.5ms", "100ns"); it forces
//     a burst of 1;
//   - "" (or "unlimited", "max"), and zero in any unit ("0", "0pps",
//     "0Gbps", "ifg=0"): no pacing, flat out.
//
// A byte rate ("10MBps", "10MB/s", "10MB") and a number without a unit
// ("1000": frames or bits?) are refused. Errors wrap ErrBadRate and show
// examples. docs/rate.md's table lists every spelling.
func ParseRate(s string) (Rate, error) {
	t := strings.TrimSpace(s)
	switch strings.ToLower(t) {
	case "", "0", "unlimited", "max":
		return Rate{}, nil
	}
	if pct, ok := strings.CutSuffix(t, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
		switch {
		case err != nil || math.IsNaN(v):
			return Rate{}, badRate(s, "a share of the link is a number and %, e.g. 50%", "is not a share of the link", "give a number and %, e.g. 50%")
		case v <= 0 || v > 100:
			return Rate{}, badRate(s, "a share of the link is above 0% and at most 100%", "is outside 0% to 100% of the link", "give a share above 0% and at most 100%, e.g. 50%")
		}
		return Rate{kind: kindLink, share: v / 100}, nil
	}
	if rest, ok := strings.CutPrefix(strings.ToLower(t), "ifg="); ok {
		d, err := time.ParseDuration(strings.TrimSpace(rest))
		if err != nil || d < 0 {
			return Rate{}, badRate(s, "ifg= wants a positive duration such as ifg=10us or ifg=1ms", "has no positive duration after ifg=", "give one such as ifg=10us or ifg=1ms")
		}
		if d == 0 {
			return Rate{}, nil // no gap between frames: flat out
		}
		return Rate{kind: kindIFG, ifg: d}, nil
	}
	// Split the number from the unit.
	i := 0
	for i < len(t) && strings.IndexByte("0123456789.eE+-", t[i]) >= 0 {
		i++ // no unit starts with e or E, so the exponent needs no special case
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	if num == "" {
		return Rate{}, badRate(s, "no number", "has no number", "give a number and a unit, such as 1Mpps or 10Gbps")
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return Rate{}, badRate(s, fmt.Sprintf("%q is not a number", num), fmt.Sprintf("has %q, which is not a number", num), "give a number and a unit, such as 1Mpps or 10Gbps")
	}
	if v < 0 {
		return Rate{}, badRate(s, "the rate must be positive, or 0 (or empty) for flat out", "is negative", "give a positive rate, or 0 (or nothing) for flat out")
	}
	if unit == "" && v == 0 {
		return Rate{}, nil // "0.0": flat out, as "0"
	}
	if unit == "" {
		return Rate{}, badRate(s, fmt.Sprintf("missing unit: say %spps, %sfps or %sMbps", num, num, num), "has no unit", fmt.Sprintf("say %spps, %sfps or %sMbps", num, num, num))
	}
	u, ok := parseUnit(unit)
	switch {
	case !ok:
		return Rate{}, badRate(s, fmt.Sprintf("unknown unit %q; want %s", unit, unitForms), fmt.Sprintf("has the unknown unit %q", unit), "use "+unitForms)
	case u.bytes:
		bits := scaled(v*u.mult*8, []string{"", "k", "M", "G", "T"}) + "bps"
		return Rate{}, badRate(s, "bytes per second are not accepted (B); write bits, e.g. "+bits, "is in bytes per second (B), which are not accepted", "write bits, e.g. "+bits)
	case v == 0:
		return Rate{}, nil // zero in any unit: flat out
	case u.kind == kindFrames:
		return Rate{kind: kindFrames, value: v * u.mult, unit: u.frames}, nil
	}
	return Rate{kind: kindBits, value: v * u.mult}, nil
}

// unitForms says which units ParseRate reads, for its errors.
const unitForms = "pps or fps (prefix k, M or G in either case: 1mpps = 1Mpps), bits per second as bps, bit, bit/s or b/s (prefix k, M, G or T in either case, or Ki, Mi, Gi, Ti: powers of 1024) or a prefix alone (10M = 10Mbps, as iperf3), ifg=<duration>, or a share of the link such as 50%"

// rateUnit is what a unit of ParseRate means.
type rateUnit struct {
	kind   rateKind // kindFrames or kindBits
	mult   float64  // the prefix's multiple
	frames string   // "pps" or "fps" for kindFrames
	bytes  bool     // a byte rate (B): refused, with what to write instead
}

// parseUnit reads the unit after a rate's number (docs/rate.md's table):
// an optional prefix (k, M, G, T, any case, for nobody means milli-packets
// or millibits; Ki, Mi, Gi, Ti for powers of 1024 before bit), then pps or
// fps (prefixes up to G), or a bit rate: bps, bit, bit/s, b/s, or nothing
// after the prefix (iperf3's 10M). A capital B before ps or /s, or alone,
// is a byte rate, which the caller refuses.
func parseUnit(unit string) (rateUnit, bool) {
	mult, base := 1.0, unit
	if len(unit) > 0 {
		if i := strings.IndexByte("kmgt", unit[0]|0x20); i >= 0 { // |0x20: lower case
			mult, base = math.Pow(1000, float64(i+1)), unit[1:]
			if len(base) > 0 && base[0]|0x20 == 'i' {
				// IEC prefixes before bit: Kibit, Mibit/s (tc, trafgen).
				mult, base = math.Pow(1024, float64(i+1)), base[1:]
				switch b := strings.ToLower(base); {
				case base == "B" || base == "B/s":
					return rateUnit{kind: kindBits, mult: mult, bytes: true}, true
				case b != "bit" && b != "bit/s":
					return rateUnit{}, false
				}
			}
		}
	}
	switch base {
	case "B", "Bps", "B/s":
		return rateUnit{kind: kindBits, mult: mult, bytes: true}, true
	}
	switch b := strings.ToLower(base); b {
	case "pps", "fps":
		return rateUnit{kind: kindFrames, mult: mult, frames: b}, mult <= 1e9
	case "bps", "bit", "bit/s", "b/s":
		return rateUnit{kind: kindBits, mult: mult}, true
	case "":
		return rateUnit{kind: kindBits, mult: mult}, mult > 1 // 10M: iperf3's bits per second
	}
	return rateUnit{}, false
}

// LinkShare reports whether the rate is a share of the link's speed
// (--rate 50%).
func (r Rate) LinkShare() bool { return r.kind == kindLink }

// Resolved reports whether the rate has a frame rate: not a share of the
// link still waiting for OfLink.
func (r Rate) Resolved() bool { return r.kind != kindLink || r.linkBps > 0 }

// OfLink resolves a share of the link (LinkShare) for a link of linkBps
// bits per second (sysinfo: /sys/class/net/IFACE/speed × 10⁶); other
// rates are returned unchanged.
func (r Rate) OfLink(linkBps float64) Rate {
	if r.kind == kindLink {
		r.linkBps = linkBps
	}
	return r
}

// Unlimited reports whether the rate means "as fast as the path goes".
func (r Rate) Unlimited() bool { return r.kind == kindUnlimited }

// IFG reports whether the rate is a fixed inter-frame interval (ifg=…),
// which forces a burst of 1.
func (r Rate) IFG() bool { return r.kind == kindIFG }

// Bits reports whether the rate is a bit rate, whose frame rate depends on
// the frame size and the layer.
func (r Rate) Bits() bool { return r.kind == kindBits || r.kind == kindLink }

// FramesPerSecond converts the rate to frames per second. meanFrameBytes
// (the mean frame length as wpg builds it, without FCS) and layer matter
// only for bit rates. It returns 0 for an unlimited rate.
func (r Rate) FramesPerSecond(meanFrameBytes float64, layer Layer) float64 {
	switch r.kind {
	case kindFrames:
		return r.value
	case kindIFG:
		return 1e9 / float64(r.ifg.Nanoseconds())
	case kindBits:
		b := meanFrameBytes
		if layer == L1 {
			b += L1Overhead
		}
		if b <= 0 {
			return 0
		}
		return r.value / (8 * b)
	case kindLink:
		if b := meanFrameBytes + L1Overhead; b > 0 {
			return r.share * r.linkBps / (8 * b)
		}
	}
	return 0
}

// Split returns the share of each of w workers: the engine gives every
// worker r.Split(w), so the workers together send r. A frame or bit rate is
// divided by w; an ifg interval is multiplied by w (each worker keeps 1/w of
// the frames, spaced w×ifg apart; the workers are not phase-locked to each
// other, so the merged stream's gaps are only regular per worker).
func (r Rate) Split(w int) Rate {
	if w <= 1 || r.kind == kindUnlimited {
		return r
	}
	s := r
	switch r.kind {
	case kindFrames, kindBits:
		s.value = r.value / float64(w)
	case kindIFG:
		s.ifg = r.ifg * time.Duration(w)
	case kindLink:
		s.linkBps = r.linkBps / float64(w)
	}
	return s
}

// String returns the rate in the syntax ParseRate reads ("" for
// unlimited), normalised to the largest exact prefix: "250kpps",
// "10Gbps", "ifg=10µs".
func (r Rate) String() string {
	switch r.kind {
	case kindFrames:
		return scaled(r.value, []string{"", "k", "M", "G"}) + r.unit
	case kindBits:
		return scaled(r.value, []string{"", "k", "M", "G", "T"}) + "bps"
	case kindIFG:
		return "ifg=" + r.ifg.String()
	case kindLink:
		return strconv.FormatFloat(r.share*100, 'f', -1, 64) + "%"
	}
	return ""
}

func scaled(v float64, prefixes []string) string {
	i := 0
	for i+1 < len(prefixes) && v >= 1000 {
		v /= 1000
		i++
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + prefixes[i]
}

// MaxInterval is the longest interval between two frames of one pacer
// (one worker): 2⁶² ns, about 146 years. The pacer keeps its schedule in
// int64 nanoseconds; this leaves half of that range for the clock.
const MaxInterval = time.Duration(1 << 62)

// MaxFPS is the highest frame rate of one pacer (one worker): 10¹² frames
// per second, a picosecond apart, far beyond any path.
const MaxFPS = 1e12

// minFPS is the frame rate whose interval is MaxInterval.
var minFPS = 1e9 / float64(MaxInterval)

// ErrRateRange is wrapped by CheckRange errors.
var ErrRateRange = errors.New("rate out of range")

// CheckRange reports whether the share of each of workers workers of r,
// for frames of meanFrameBytes at layer, is a rate a pacer can keep: its
// interval at most MaxInterval, its frame rate at most MaxFPS. The error
// gives the valid range for the whole run. An unlimited rate is always in
// range.
func (r Rate) CheckRange(meanFrameBytes float64, layer Layer, workers int) error {
	if r.kind == kindUnlimited {
		return nil
	}
	w := float64(max(workers, 1))
	var fps float64 // one worker's frame rate
	if r.kind == kindIFG {
		fps = 1e9 / (float64(r.ifg.Nanoseconds()) * w) // in float: ifg × workers may not fit a Duration
	} else {
		fps = r.FramesPerSecond(meanFrameBytes, layer) / w
	}
	if fps >= minFPS && fps <= MaxFPS {
		return nil
	}
	what := fmt.Sprintf("%.3g frames per second per worker", fps)
	if fps > 0 && fps < minFPS {
		what = "one frame every " + longDuration(1/fps) + " per worker"
	}
	return fmt.Errorf("%w: that is %s; one worker's pacer keeps from one frame every %s to %.3g frames per second, so with %d worker(s) give a rate from %.3gpps to %.3gpps",
		ErrRateRange, what, longDuration(float64(MaxInterval)/1e9), MaxFPS, max(workers, 1), minFPS*w*1.001, MaxFPS*w)
}

// longDuration formats sec seconds, in years beyond a year, with three
// significant digits beyond 10,000 of them (--rate 1e-300pps is one frame
// every 3.17e+292 years, not a 300-digit number).
func longDuration(sec float64) string {
	const year = 365.25 * 24 * 3600
	if y := sec / year; y >= 1e4 {
		return strconv.FormatFloat(y, 'g', 3, 64) + " years"
	} else if sec >= year {
		return strconv.FormatFloat(y, 'f', 1, 64) + " years"
	}
	return time.Duration(sec * 1e9).String()
}

// Config returns the pacer configuration of one of workers workers for
// this rate: FPS is the worker's share (Split), IFG is set for an ifg=
// rate. The caller fills in Burst (--burst), Wait and Clock.
func (r Rate) Config(meanFrameBytes float64, layer Layer, workers int) Config {
	return Config{FPS: r.Split(workers).FramesPerSecond(meanFrameBytes, layer), IFG: r.IFG()}
}

// MarshalText writes the rate as String does ("2kpps", "" for unlimited),
// so that a spec holding one reads well as JSON.
func (r Rate) MarshalText() ([]byte, error) { return []byte(r.String()), nil }
