package job

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/engine"
)

// Segments (Spec.Segment, wpg send --segment I/N; docs/distributed.md)
// split one job over N senders, as k6's execution segments split a load
// test: segment I sends a disjoint, deterministic share of every stream
// (the packets k ≡ w + W·I (mod W·N) of worker w of W, template/segment.go),
// of the rate (each of the N·W senders keeps 1/(N·W) of it) and of the
// --count, so that the N segments together send exactly the frames of
// one unsegmented run, and one receiver verifies them all at once.

// ParseSegment reads a segment as Spec.Segment holds it, "I/N": index I
// (0 … N-1) of N segments. "" is the whole job, 0/1.
func ParseSegment(s string) (i, n int, err error) {
	if s == "" {
		return 0, 1, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	i, ierr := strconv.Atoi(strings.TrimSpace(is))
	n, nerr := strconv.Atoi(strings.TrimSpace(ns))
	switch {
	case !ok || ierr != nil || nerr != nil:
		return 0, 0, errors.New("is not a segment I/N")
	case n < 1:
		return 0, 0, fmt.Errorf("has %d segments", n)
	case n > MaxSegments:
		return 0, 0, fmt.Errorf("has %d segments, more than the signature's %d senders", n, MaxSegments)
	case i < 0 || i >= n:
		return 0, 0, fmt.Errorf("has index %d, outside 0 … %d of %d segments", i, n-1, n)
	}
	return i, n, nil
}

// MaxSegments is the most segments one job has: every segment's workers
// are senders the signature names, at most 256 of them (segments ×
// workers).
const MaxSegments = MaxWorkers

// segmentFix is the fix of a segment that does not parse.
const segmentFix = "give {segment} I/N, the index I (0 … N-1) of N segments, e.g. 0/3, 1/3 and 2/3 for three senders"

// checkSegment checks s.Segment against the run: a segment splits a
// packet template's streams, and every segment's workers are senders the
// signature names. It returns the segment's index and count.
func checkSegment(p *problems, s Spec, reg backend.Registration) (i, n int, ok bool) {
	i, n, err := ParseSegment(s.Segment)
	if err != nil {
		p.add("segment", s.Segment, err.Error(), segmentFix)
		return 0, 1, false
	}
	if n == 1 {
		return i, n, true
	}
	if reg.Payload {
		p.add("segment", s.Segment, fmt.Sprintf("splits a packet template's streams over several senders, and %s moves payload frames between two processes on one host", reg.Name),
			"drop {segment}, or send packets on a network backend ("+joinNames(backendsWhere(false))+")")
		return i, n, false
	}
	if s.Workers*n > MaxWorkers {
		p.add("segment", s.Segment, fmt.Sprintf("with {workers} %d makes %d senders; the frame signature names at most %d", s.Workers, s.Workers*n, MaxWorkers),
			fmt.Sprintf("give fewer segments or workers: segments × workers at most %d", MaxWorkers))
		return i, n, false
	}
	return i, n, true
}

// segmentCountFix is the fix of a --count that cannot be split over the
// segments.
const segmentCountFix = "give each stream a count: in the template instead of {count}, or use {duration}"

// Identity returns the job identity of spec: a name that every segment of
// one job shares (wpg send --segment 0/3, 1/3, 2/3 with the same other
// settings) and another job does not, "wpg-" and 16 hex digits. It hashes
// what decides which frames go and when: the template's text (or the
// embedded default and --size), a capture's bytes (--pcap) and its speed,
// the payload settings, --count, --duration, the rate, its layer and
// burst, the workers and the number of segments, and the command. It
// leaves out the segment's index and what each host sets for itself
// (backend, interface, output file, cores, batch, ring, clock, wait):
// the segments of one job may send through different paths. It reads the
// template, capture and payload files.
func Identity(spec Spec) (string, error) {
	_, n, err := ParseSegment(spec.Segment)
	if err != nil {
		return "", fmt.Errorf("segment %q: %w", spec.Segment, err)
	}
	fileHash := func(path string) (string, error) {
		if path == "" {
			return "", nil
		}
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	id := struct {
		Command, Template, Pcap, PayloadFile string
		TemplateText                         string
		PcapSpeed                            float64
		Size, Fill                           string
		Raw                                  bool
		Seed                                 *uint64
		Count                                uint64
		Duration                             time.Duration
		Rate, RateLayer                      string
		Burst, Workers, Segments             int
	}{
		Command: spec.Command, PcapSpeed: spec.PcapSpeed, Size: spec.Size, Fill: spec.Fill, Raw: spec.Raw, Seed: spec.Seed,
		Count: spec.Count, Duration: spec.Duration, Rate: spec.Rate, RateLayer: spec.RateLayer, Burst: spec.Burst,
		Workers: max(spec.Workers, 1), Segments: n,
	}
	if id.Command == "" {
		id.Command = "send"
	}
	if spec.TemplateText != "" {
		sum := sha256.Sum256([]byte(spec.TemplateText))
		id.TemplateText = hex.EncodeToString(sum[:])
	}
	for _, f := range []struct {
		path string
		into *string
	}{{spec.Template, &id.Template}, {spec.Pcap, &id.Pcap}, {spec.PayloadFile, &id.PayloadFile}} {
		if *f.into, err = fileHash(f.path); err != nil {
			return "", err
		}
	}
	b, _ := json.Marshal(id)
	sum := sha256.Sum256(b)
	return "wpg-" + hex.EncodeToString(sum[:8]), nil
}

// segmentNote says what a segment's share of its job was: nothing at
// all (a --count or streams' counts smaller than the segments), or less
// than it sent, which it never is.
func segmentNote(pr *prepared, res *engine.Result) string {
	fs := pr.frames
	if pr.segs <= 1 || !fs.segLimited {
		return ""
	}
	if fs.segFrames == 0 {
		what := "the streams' counts"
		if pr.spec.Count > 0 {
			what = fmt.Sprintf("--count %d", pr.spec.Count)
		}
		return fmt.Sprintf("segment %d/%d has nothing to send: the frames of %s all go to the lower segments (each stream's frames are dealt to the segments in turn, the lowest first)", pr.seg, pr.segs, what)
	}
	if res.Stop == engine.StopSource && res.Frames < fs.segFrames {
		return fmt.Sprintf("segment %d/%d sent %d of its %d frames", pr.seg, pr.segs, res.Frames, fs.segFrames)
	}
	return ""
}

// Job returns the run's job identity (Identity; "" when its files could
// not be read again): the report's job, and the job label of its metrics.
func (r *Run) Job() string { return r.pr.jobID }

// Segment returns the run's segment, "I/N", or "" for a whole job.
func (r *Run) Segment() string {
	if r.pr.segs <= 1 {
		return ""
	}
	return fmt.Sprintf("%d/%d", r.pr.seg, r.pr.segs)
}
